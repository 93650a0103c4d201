/** The routes the served application registers, read from its Express router (the route-driven matrices walk them). */
import type { Express } from 'express';

/** A router layer as Express 5 (router 2) keeps it: a route, or a nested router with its own stack. */
interface RouterLayer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/** Every method and path the routers under `stack` register (nested routers mounted without a path included). */
function registered(stack: RouterLayer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) return Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m] && m !== '_all').map((m) => `${m.toUpperCase()} ${String(layer.route!.path)}`);
    if (layer.handle?.stack && layer.rawPath === '/') return registered(layer.handle.stack);
    return [];
  });
}

/** `METHOD /path` of every route of the application router mounted at /app (paths relative to /app); null when none is mounted. */
export function applicationRoutes(app: Express): string[] | null {
  const stack = (app as unknown as { router: { stack: RouterLayer[] } }).router.stack;
  const appLayer = stack.find((l) => l.rawPath === '/app');
  return appLayer?.handle?.stack ? registered(appLayer.handle.stack) : null;
}
