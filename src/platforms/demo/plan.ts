/** Which demo accounts and shops exist and how much data each gets. */
import { SHOPS, type ShopDefinition } from './catalogue.js';

/** Data sizes: `demo` is what people click through; `bench` is one big shop for load tests. */
export const DEMO_SIZES = {
  demo: { ordersPerShop: 3000, days: 365 },
  acme: { ordersPerShop: 500, days: 365 },
  bench: { accountCode: 'bench', shopCode: 'sk', orders: 1_000_000, days: 365 },
} as const;

export interface DemoAccountSpec {
  code: string;
  name: string;
  planCode: string;
  timeZone: string;
  shops: ShopDefinition[];
  ordersPerShop: number;
  days: number;
}

/** The demo tenant (D21) and a second tenant whose shop codes overlap on purpose, to prove isolation (D9). */
export const DEMO_ACCOUNTS: DemoAccountSpec[] = [
  {
    code: 'demo', name: 'Demo Retail s.r.o.', planCode: 'growth', timeZone: 'Europe/Bratislava',
    shops: [SHOPS.sk, SHOPS.cz, SHOPS.hu, SHOPS.pl],
    ordersPerShop: DEMO_SIZES.demo.ordersPerShop, days: DEMO_SIZES.demo.days,
  },
  {
    code: 'acme', name: 'Acme Home s.r.o.', planCode: 'start', timeZone: 'Europe/Prague',
    shops: [
      { ...SHOPS.sk, name: 'Acme Home SK', baseUrl: 'https://www.acmehome.sk' },
      { ...SHOPS.cz, name: 'Acme Home CZ', baseUrl: 'https://www.acmehome.cz' },
    ],
    ordersPerShop: DEMO_SIZES.acme.ordersPerShop, days: DEMO_SIZES.acme.days,
  },
];

/** The benchmark tenant: one shop with a million orders. */
export const BENCH_ACCOUNT: DemoAccountSpec = {
  code: DEMO_SIZES.bench.accountCode, name: 'Bench Load s.r.o.', planCode: 'pro', timeZone: 'Europe/Bratislava',
  shops: [{ ...SHOPS.sk, name: 'Bench SK' }],
  ordersPerShop: DEMO_SIZES.bench.orders, days: DEMO_SIZES.bench.days,
};

/** Looks up a demo account spec (demo, acme or bench) by its code. */
export function demoAccountSpec(code: string): DemoAccountSpec {
  const spec = [...DEMO_ACCOUNTS, BENCH_ACCOUNT].find((a) => a.code === code);
  if (!spec) throw new Error(`Unknown demo account: ${code}`);
  return spec;
}
