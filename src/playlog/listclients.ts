// Icecast 2.4's `/admin/listclients?mount=` answer (xiph/Icecast-Server src/admin.c,
// command_show_listeners, and src/stats.c / admin_add_listeners_to_mount): an `icestats`
// document whose `source` holds one `listener` element per client, with `ID`, `IP`,
// `UserAgent` and `Connected` (seconds). Pure: read with a few patterns, nothing else is needed.

export interface ListedClient {
  id: string;
  ip: string;
  userAgent: string;
  connectedSeconds: number;
}

const LISTENER = /<listener\b[^>]*>([\s\S]*?)<\/listener>/g;

export function parseListClients(xml: string): ListedClient[] {
  const clients: ListedClient[] = [];
  for (const [, body = ''] of xml.matchAll(LISTENER)) {
    const id = element(body, 'ID');
    if (id === undefined) continue;
    const connected = Number(element(body, 'Connected') ?? '0');
    clients.push({
      id,
      ip: element(body, 'IP') ?? '',
      userAgent: element(body, 'UserAgent') ?? '',
      connectedSeconds: Number.isFinite(connected) && connected >= 0 ? connected : 0,
    });
  }
  return clients;
}

function element(body: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(body);
  return match?.[1] === undefined ? undefined : decodeXmlText(match[1]);
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return ENTITIES[name] ?? whole;
  });
}
