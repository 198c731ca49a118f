// `svc outputs add TYPE`: a commented config block for each output type, to paste under
// `outputs:` in .svcrc.yaml (docs/outputs.md). Every uncommented line is a working setting once
// the placeholders in capitals are filled in; the commented ones are the optional keys. Pure data.

import { isOutputType, type OutputType } from '../../config/output-types';

const COMMON = `    # retryForSeconds: 86400     # how long a message is retried before it is given up
    # delay: 0                   # seconds each message waits after the change (audio behind the studio)
    # channel: main              # only this channel's plays (docs/channels.md); absent: every channel's`;

export const OUTPUT_BLOCKS: Readonly<Record<OutputType, string>> = {
  webhook: `  # Signed JSON POST per track change (Standard Webhooks), after enrichment.
  - name: my-webhook
    type: webhook
    url: https://example.org/hooks/svc
    secret: whsec_REPLACEwithYOURbase64SECRET   # make one: echo "whsec_$(openssl rand -base64 32)"
${COMMON}`,
  discord: `  # One Discord message per track, with the cover attached.
  - name: discord
    type: discord
    url: https://discord.com/api/webhooks/ID/TOKEN   # Server Settings, Integrations, Webhooks
${COMMON}`,
  icecast: `  # The Icecast mount's stream title, at once on a change.
  - name: stream
    type: icecast
    url: http://127.0.0.1:8000/live
    password: SOURCE_PASSWORD
    # user: source
    # format: "{{artist}} - {{title}}"
${COMMON}`,
  shoutcast: `  # The SHOUTcast server's stream title, at once on a change.
  - name: shoutcast
    type: shoutcast
    url: http://127.0.0.1:8000
    password: DJ_OR_ADMIN_PASSWORD
    # sid: 1                     # SHOUTcast 2 stream id
    # format: "{{artist}} - {{title}}"
${COMMON}`,
  mqtt: `  # Retained JSON on <topic>/now_playing; Home Assistant discovery with homeAssistant: true.
  - name: home
    type: mqtt
    url: mqtt://127.0.0.1:1883
    # username: svc
    # password: BROKER_PASSWORD
    # topic: svc
    # homeAssistant: true
    # discoveryPrefix: homeassistant   # Home Assistant's MQTT discovery prefix, if you changed it there
    # instance: radio-8899       # this instance in <topic>/status/<instance>; default host name and port
${COMMON}`,
  url: `  # One GET per track change whose query is a template; each {{field}} is URL-encoded.
  # TuneIn AIR (partner id and key from TuneIn, station id s123456):
  - name: tunein
    type: url
    url: "https://air.radiotime.com/Playing.ashx?partnerId=PARTNER_ID&partnerKey=PARTNER_KEY&id=s123456&title={{title}}&artist={{artist}}&album={{album}}"
    # method: POST               # GET by default; POST sends body as a form
    # body: "artist={{artist}}&title={{title}}"
    # headers: { X-Api-Key: "KEY" }
${COMMON}
  # radio.de (broadcast subdomain and API key from radio.de):
  # - name: radio-de
  #   type: url
  #   url: "https://api.radio.de/info/v2/pushmetadata/playingsong?broadcast=SUBDOMAIN&apikey=API_KEY&title={{title}}&artist={{artist}}&album={{album}}"`,
  listenbrainz: `  # Scrobbles the station's music to a ListenBrainz account (playing now, then the listen).
  - name: listenbrainz
    type: listenbrainz
    token: USER_TOKEN             # listenbrainz.org/settings: User token
    # url: https://api.listenbrainz.org
${COMMON}`,
  lastfm: `  # Scrobbles the station's music to a Last.fm account (now playing, then the scrobble).
  - name: lastfm
    type: lastfm
    apiKey: API_KEY               # last.fm/api/account/create
    apiSecret: SHARED_SECRET
    sessionKey: SESSION_KEY       # from auth.getSession (docs/outputs.md "lastfm")
    # url: https://ws.audioscrobbler.com/2.0/
${COMMON}`,
  obs: `  # Sets an OBS Text source's text over OBS's WebSocket (OBS 28+: Tools, WebSocket Server Settings).
  - name: obs
    type: obs
    url: ws://127.0.0.1:4455
    input: Now Playing            # the Text source's name
    # password: OBS_WEBSOCKET_PASSWORD
    # format: "{{artist}} - {{title}}"
    # imageInput: Cover           # an Image source shown the cover...
    # imagePath: /home/me/obs/cover.img   # ...written to this file
${COMMON}`,
  rds: `  # RadioText for an FM station's RDS encoder: TEXT= (and RTP=, DPS=) lines over TCP.
  - name: rds
    type: rds
    url: tcp://192.168.1.50:10001
    # format: "{{artist}} - {{title}}"   # RadioText, cut to 64 characters
    # ps: "{{artist}} {{title}}"         # dynamic PS, scrolled 8 characters at a time
    # rtPlus: true                        # RadioText Plus tags ITEM.ARTIST and ITEM.TITLE
${COMMON}`,
  dls: `  # DAB+ Dynamic Label with DL Plus tags: the file ODR-PadEnc reads (odr-padenc --dls FILE).
  - name: dab
    type: dls
    path: /var/lib/odr/dls.txt
    # format: "{{artist}} - {{title}}"   # cut to 128 characters
${COMMON}`,
};

/** The block for `type`, under an `outputs:` line so that it is a whole config file. */
export function outputBlock(type: string): string | undefined {
  const block = isOutputType(type) ? OUTPUT_BLOCKS[type] : undefined;
  return block === undefined ? undefined : `# Add to .svcrc.yaml (docs/outputs.md); fill in the values in capitals.\noutputs:\n${block}\n`;
}
