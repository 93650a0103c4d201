/**
 * Store-operations event forwarder for Medusa v2: copy this file into your Medusa project's `src/subscribers/`.
 *
 * Medusa has no outbound webhooks, so this subscriber tells the store-operations data service that something changed:
 * for each event in FORWARDED_EVENTS it sends one signed POST with the event's name and the ids it carries (never
 * names, addresses or amounts: the service reads those through the Admin API with its own key).
 * It is fire-and-forget: Medusa never waits for the service, and a POST that fails or takes longer than the time-out
 * is logged and dropped, not retried (the service also polls, so a lost event delays a change, it loses nothing).
 *
 * Settings (environment of the Medusa process): STORE_OPS_FORWARD_URL (the address the service gives for the shop),
 * STORE_OPS_FORWARD_SECRET (the shared secret), STORE_OPS_FORWARD_TIMEOUT_MS (default 3000). Without URL and secret
 * it forwards nothing. Payload, headers and how to verify the signature: docs/medusa.md in the service's repository.
 */
import { createHmac, randomUUID } from "node:crypto"
import type { SubscriberArgs, SubscriberConfig } from "@medusajs/framework"

/** Version of the payload format; it goes up only when a field changes meaning or goes away. */
const PAYLOAD_VERSION = 1
const DEFAULT_TIMEOUT_MS = 3000

/**
 * What is forwarded: Medusa's workflow events (the ones its docs list for subscribers), plus the promotion and
 * price-list module events because no workflow event exists for them in Medusa 2.21.
 */
export const FORWARDED_EVENTS = [
  // Orders, payments and fulfilments
  "order.placed",
  "order.updated",
  "order.canceled",
  "order.completed",
  "order.archived",
  "order.fulfillment_created",
  "order.fulfillment_canceled",
  "order.return_requested",
  "order.return_received",
  "order.claim_created",
  "order.exchange_created",
  "order-edit.confirmed",
  "shipment.created",
  "delivery.created",
  "payment.captured",
  "payment.refunded",
  // Catalogue
  "product.created",
  "product.updated",
  "product.deleted",
  "product-variant.created",
  "product-variant.updated",
  "product-variant.deleted",
  "product-category.created",
  "product-category.updated",
  "product-category.deleted",
  // Stock
  "inventory-item.created",
  "inventory-item.updated",
  "inventory-item.deleted",
  "inventory-level.created",
  "inventory-level.updated",
  "inventory-level.deleted",
  "reservation-item.created",
  "reservation-item.updated",
  "reservation-item.deleted",
  // Customers
  "customer.created",
  "customer.updated",
  "customer.deleted",
  // Promotions (coupons) and price lists: module events
  "promotion.promotion.created",
  "promotion.promotion.updated",
  "promotion.promotion.deleted",
  "promotion.campaign.created",
  "promotion.campaign.updated",
  "promotion.campaign.deleted",
  "pricing.price-list.created",
  "pricing.price-list.updated",
  "pricing.price-list.deleted",
]

type Ids = Record<string, string | string[]>

/** Keeps only identifiers (`id`, `*_id`, `*_ids` holding strings): the payload must never carry personal data. */
export function idsOnly(data: unknown): Ids {
  const ids: Ids = {}
  if (!data || typeof data !== "object" || Array.isArray(data)) return ids
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (key !== "id" && !key.endsWith("_id") && !key.endsWith("_ids")) continue
    if (typeof value === "string") ids[key] = value
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) ids[key] = value as string[]
  }
  return ids
}

/** `v1=` + hex HMAC-SHA256 over `<timestamp>.<body>`, the same scheme as the service's own outbound webhooks. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`
}

function occurredAt(metadata: unknown): string {
  const createdAt = (metadata as { created_at?: unknown } | undefined)?.created_at
  const date = createdAt instanceof Date || typeof createdAt === "string" ? new Date(createdAt) : new Date()
  return Number.isNaN(date.getTime()) ? new Date().toISOString() : date.toISOString()
}

type Logger = { warn: (message: string) => void }

async function post(url: string, secret: string, timeoutMs: number, name: string, id: string, body: string, logger: Logger): Promise<void> {
  const timestamp = Math.floor(Date.now() / 1000).toString()
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "User-Agent": `StoreOps-Medusa-Forwarder/${PAYLOAD_VERSION}`,
        "X-Store-Ops-Event": name,
        "X-Store-Ops-Event-Id": id,
        "X-Store-Ops-Timestamp": timestamp,
        "X-Store-Ops-Signature": signature(secret, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    })
    // The reply body is never read; drain it so the connection can be reused.
    await res.arrayBuffer().catch(() => undefined)
    if (!res.ok) logger.warn(`store-ops forwarder: ${name} refused with HTTP ${res.status}`)
  } catch (err) {
    // Never log the URL (it may carry a token) or the secret.
    logger.warn(`store-ops forwarder: ${name} not delivered (${err instanceof Error ? err.name : "error"})`)
  }
}

export default async function storeOpsForwarder({ event, container }: SubscriberArgs<unknown>): Promise<void> {
  const url = process.env.STORE_OPS_FORWARD_URL
  const secret = process.env.STORE_OPS_FORWARD_SECRET
  if (!url || !secret) return
  const timeoutMs = Number(process.env.STORE_OPS_FORWARD_TIMEOUT_MS) || DEFAULT_TIMEOUT_MS
  const id = randomUUID()
  const body = JSON.stringify({
    version: PAYLOAD_VERSION,
    id,
    event: event.name,
    occurred_at: occurredAt(event.metadata),
    data: idsOnly(event.data),
  })
  const logger = container.resolve("logger") as Logger
  // Not awaited: Medusa's event bus waits for its subscribers, and the service must never slow Medusa down.
  void post(url, secret, timeoutMs, event.name, id, body, logger)
}

export const config: SubscriberConfig = {
  event: FORWARDED_EVENTS,
  context: { subscriberId: "store-ops-forwarder" },
}
