/**
 * A real webhook receiver on 127.0.0.1 for the tests, with its own verification written from SPEC "Signature" (not the
 * service's code): raw bytes, `v1=` among comma-separated values, constant-time comparison, 300 s tolerance.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  at: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  /** null when the signature verified, else why not. */
  verifyError: string | null;
  /** The same for the Standard Webhooks headers, verified by the official npm `standardwebhooks` library. */
  standardVerifyError: string | null;
}

export type Reply = { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Decides the reply of each request (default 200). */
  reply: (req: Received, index: number) => Reply;
  secret: string | null;
  /** Requests whose reply is not yet sent and whose connection is open, now and at most so far (exact, not timed). */
  open: number;
  maxOpen: number;
  /** Answers every request held by a 'hang' reply now, with `status`. */
  release: (status: number) => void;
  waitFor: (predicate: (requests: Received[]) => boolean, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}

/** Where a signed request carries its timestamp and signature (lower-case header names). */
export interface SignatureHeaders {
  timestamp: string;
  signature: string;
}
/** The service's outbound webhooks (SPEC "Request headers"). */
export const SERVICE_SIGNATURE_HEADERS: SignatureHeaders = { timestamp: 'x-service-timestamp', signature: 'x-service-signature' };
/** The Medusa event forwarder (docs/medusa.md): the same scheme under its own header names. */
export const MEDUSA_FORWARDER_SIGNATURE_HEADERS: SignatureHeaders = { timestamp: 'x-store-ops-timestamp', signature: 'x-store-ops-signature' };

/** Verifies a delivery as a receiver should; returns null when it is authentic and fresh. */
export function verifyWebhook(
  secret: string,
  headers: http.IncomingHttpHeaders,
  raw: Buffer,
  nowSeconds = Date.now() / 1000,
  names: SignatureHeaders = SERVICE_SIGNATURE_HEADERS,
): string | null {
  const timestamp = String(headers[names.timestamp] ?? '');
  if (!/^\d+$/.test(timestamp)) return 'missing or non-numeric timestamp';
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return 'timestamp outside the 5-minute tolerance';
  const given = String(headers[names.signature] ?? '').split(',').map((s) => s.trim()).find((s) => s.startsWith('v1='));
  if (!given) return 'no v1= signature';
  const expected = crypto.createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${timestamp}.`), raw])).digest();
  const actual = Buffer.from(given.slice(3), 'hex');
  if (actual.length !== expected.length || !crypto.timingSafeEqual(actual, expected)) return 'signature mismatch';
  return null;
}

/** Verifies the Standard Webhooks headers with the official npm library; null when authentic and fresh. */
export function verifyStandardWebhook(secret: string, headers: http.IncomingHttpHeaders, raw: Buffer): string | null {
  try {
    new Webhook(secret).verify(raw.toString('utf8'), headers as Record<string, string>);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

export async function startReceiver(
  options: { secret?: string | null; reply?: Receiver['reply']; signatureHeaders?: SignatureHeaders } = {},
): Promise<Receiver> {
  const sockets = new Set<import('node:net').Socket>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    reply: options.reply ?? (() => ({ status: 200 })),
    secret: options.secret ?? null,
    open: 0,
    maxOpen: 0,
    release: (status) => {
      for (const res of held.splice(0)) {
        if (res.writableEnded || res.destroyed) continue;
        res.writeHead(status, { 'Content-Type': 'text/plain' });
        res.end('released');
      }
    },
    waitFor: async (predicate, timeoutMs = 30_000) => {
      const until = Date.now() + timeoutMs;
      while (!predicate(receiver.requests)) {
        if (Date.now() > until) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${receiver.requests.length} requests)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    // Counted from the request's arrival until its reply is sent or its connection is closed (a client time-out).
    receiver.open++;
    receiver.maxOpen = Math.max(receiver.maxOpen, receiver.open);
    let counted = true;
    const done = () => {
      if (counted) receiver.open--;
      counted = false;
    };
    res.on('finish', done);
    res.on('close', done);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: any;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = null;
      }
      const received: Received = {
        at: Date.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body,
        verifyError: receiver.secret
          ? verifyWebhook(receiver.secret, req.headers, raw, Date.now() / 1000, options.signatureHeaders)
          : 'no secret set',
        standardVerifyError: receiver.secret ? verifyStandardWebhook(receiver.secret, req.headers, raw) : 'no secret set',
      };
      const index = receiver.requests.push(received) - 1;
      const reply = receiver.reply(received, index);
      if (reply === 'hang') {
        held.push(res);
        return;
      }
      const send = () => {
        res.writeHead(reply.status, { 'Content-Type': 'text/plain', ...reply.headers });
        res.end('a reply body the service never reads');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}

/** A port on 127.0.0.1 with nothing listening (connection refused). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
