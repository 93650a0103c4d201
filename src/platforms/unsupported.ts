/** The answer to a write the shop's platform does not take (its adapter's `capabilities.writes` lacks it). */
import { AppError } from '../errors.js';
import type { PlatformWrite } from './types.js';

const WRITE_NAMES: Record<PlatformWrite, string> = {
  coupons: 'coupons', product_texts: 'product texts', category_texts: 'category texts', availability: 'the availability dictionary',
};

export function platformUnsupported(platform: string, write: PlatformWrite, market: string): AppError {
  return new AppError('PLATFORM_UNSUPPORTED', `Shop \`${market}\` runs on the \`${platform}\` platform, which does not let the service write ${WRITE_NAMES[write]}.`,
    { market, platform, write });
}
