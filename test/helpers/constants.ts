/** Fixed points of the test data: the demo history ends at TEST_NOW, and tests read the clock from here. */
export const TEST_SEED = 424242;
export const TEST_NOW = new Date('2026-11-20T11:00:00.000Z');
export const TEST_CURSOR_SECRET = 'test-cursor-secret-0123456789abcdef0123456789';
