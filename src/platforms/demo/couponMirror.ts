/** The demo coupon book as the shop shows it at an instant (issue 10): a switch-off that lies after the instant has not happened yet. */
import type { CouponBook } from './coupons.js';
import type { GeneratedCoupon } from './types.js';

export function bookCouponsAt(book: CouponBook, untilMs: number): GeneratedCoupon[] {
  return book.couponsAt(untilMs).map((c) => (c.disabledAt && c.disabledAt.getTime() > untilMs ? { ...c, disabledAt: null } : c));
}
