/**
 * The PDF statement of a payout: pdfkit with the embedded DejaVu fonts, as documents render (Slovak and Czech names
 * need them). Deterministic: the creation date is the payout's drawing-up time, so the same payout gives the same bytes.
 */
import { loadFonts, newPdfDocument } from '../../documents/pdf.js';
import type { payoutStatement } from './payouts.js';

type Statement = Awaited<ReturnType<typeof payoutStatement>>;

const STATE_NAMES: Record<string, string> = { requested: 'draft (not yet confirmed)', approved: 'confirmed, awaiting payment', paid: 'paid', cancelled: 'cancelled' };

export function renderPayoutStatement({ payout, lines }: Statement): Promise<Buffer> {
  const { regular, bold } = loadFonts();
  const title = `Payout statement ${payout.id}`;
  const doc = newPdfDocument({
    size: 'A4', margin: 40, compress: true,
    info: { Title: title, Author: payout.programme, Creator: 'store-operations data service', Producer: 'pdfkit', CreationDate: payout.created_at, ModDate: payout.created_at },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('error', reject);
    doc.on('end', () => resolve(Buffer.concat(chunks)));
  });
  doc.registerFont('regular', regular);
  doc.registerFont('bold', bold);
  doc.font('bold').fontSize(16).text(payout.programme, 40, 40);
  doc.fontSize(13).text(title, 40, 64);
  doc.font('regular').fontSize(10);
  let y = 92;
  for (const line of [
    `Shop: ${payout.shop_name} (${payout.market})`,
    `Partner: ${payout.handle}`,
    `Period: ${payout.period_from} – ${payout.period_to}`,
    `State: ${STATE_NAMES[payout.state] ?? payout.state}${payout.paid_at ? ` on ${payout.paid_at.toISOString().slice(0, 10)}` : ''}`,
    `Commissions: ${payout.conversions}`,
  ]) {
    doc.text(line, 40, y);
    y += 15;
  }
  y += 10;
  doc.font('bold');
  const cols = [40, 200, 330, 450];
  ['Order', 'Ordered', 'Base', 'Commission'].forEach((h, i) => doc.text(h, cols[i], y, { width: 110, align: i >= 2 ? 'right' : 'left' }));
  y += 16;
  doc.font('regular');
  for (const l of lines) {
    if (y > 780) {
      doc.addPage();
      y = 40;
    }
    [l.order_code, l.ordered_at.toISOString().slice(0, 10), `${l.commission_base} ${payout.currency}`, `${l.commission} ${payout.currency}`]
      .forEach((cell, i) => doc.text(String(cell), cols[i], y, { width: 110, align: i >= 2 ? 'right' : 'left' }));
    y += 14;
  }
  y += 10;
  doc.font('bold').text(`Total: ${payout.amount} ${payout.currency}`, 40, y, { width: 520, align: 'right' });
  doc.end();
  return done;
}
