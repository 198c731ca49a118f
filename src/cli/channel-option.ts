// `--channel <name>` of svc last, watch-images and history (docs/channels.md "Now playing per channel").

export const CHANNEL_OPTION = '--channel <name>';

/** `path?channel=NAME`, or `path` itself without a channel. */
export function withChannel(path: string, channel: string | undefined): string {
  return channel === undefined ? path : `${path}?${new URLSearchParams({ channel }).toString()}`;
}
