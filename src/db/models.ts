/**
 * Objection models: table names and relations of the core records, used for single-record reads and writes.
 * Listings and summaries stay hand-written knex queries in src/queries (ARCHITECTURE "Data").
 * Every query passes its knex instance (`Model.query(db)`), so tests can run several databases in one process.
 */
import { Model, type RelationMappings } from 'objection';

/** A client account: one tenant (D9). */
export class Account extends Model {
  static override tableName = 'accounts';
  id!: string;
  code!: string;
  name!: string;
  plan_code!: string;
  time_zone!: string;

  static override get relationMappings(): RelationMappings {
    return {
      shops: { relation: Model.HasManyRelation, modelClass: Shop, join: { from: 'accounts.id', to: 'shops.account_id' } },
      accessKeys: { relation: Model.HasManyRelation, modelClass: AccessKey, join: { from: 'accounts.id', to: 'access_keys.account_id' } },
    };
  }
}

/** A shop of an account, addressed by its code (`market`). */
export class Shop extends Model {
  static override tableName = 'shops';
  id!: string;
  account_id!: string;
  code!: string;

  static override get relationMappings(): RelationMappings {
    return {
      account: { relation: Model.BelongsToOneRelation, modelClass: Account, join: { from: 'shops.account_id', to: 'accounts.id' } },
      orders: { relation: Model.HasManyRelation, modelClass: Order, join: { from: 'shops.id', to: 'orders.shop_id' } },
      shipments: { relation: Model.HasManyRelation, modelClass: Shipment, join: { from: 'shops.id', to: 'shipments.shop_id' } },
    };
  }
}

/** An access key (D10): only its SHA-256 is stored. */
export class AccessKey extends Model {
  static override tableName = 'access_keys';
  // interfaces, scopes and shop_codes are Postgres text[] columns, not JSON (objection's default for arrays).
  static override jsonAttributes: string[] = [];
  id!: string;
  account_id!: string;
  name!: string;
  key_hash!: Buffer;
  key_hint!: string;
  interfaces!: string[];
  scopes!: string[];
  all_shops!: boolean;
  shop_codes!: string[];
  created_by!: string;
  created_at!: Date;
  expires_at!: Date | null;
  last_used_at!: Date | null;
  revoked_at!: Date | null;
  /** AI write mode (D13): read_only, proposals, autonomous. */
  write_mode!: string;
  /** The person who issued the key in the application; null for the operator command line. */
  person_id!: string | null;

  static override get relationMappings(): RelationMappings {
    return { account: { relation: Model.BelongsToOneRelation, modelClass: Account, join: { from: 'access_keys.account_id', to: 'accounts.id' } } };
  }
}

/** A stored order with its items. */
export class Order extends Model {
  static override tableName = 'orders';
  id!: string;
  shop_id!: string;
  code!: string;

  static override get relationMappings(): RelationMappings {
    return { items: { relation: Model.HasManyRelation, modelClass: OrderItem, join: { from: 'orders.id', to: 'order_items.order_id' } } };
  }
}

export class OrderItem extends Model {
  static override tableName = 'order_items';
}

/** A shipment with its tracking events. */
export class Shipment extends Model {
  static override tableName = 'shipments';
  id!: string;
  shop_id!: string;

  static override get relationMappings(): RelationMappings {
    return { trackingEvents: { relation: Model.HasManyRelation, modelClass: ShipmentTrackingEvent, join: { from: 'shipments.id', to: 'shipment_tracking_events.shipment_id' } } };
  }
}

export class ShipmentTrackingEvent extends Model {
  static override tableName = 'shipment_tracking_events';
}
