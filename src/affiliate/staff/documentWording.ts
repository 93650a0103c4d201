/**
 * The wording of a programme document in its three forms (issue 24 point 3): sanitised HTML as uploaded, the plain
 * text a signature keeps (and the portal shows), and a PDF rendered with pdfkit and the embedded DejaVu fonts, as
 * payout statements and shop documents are (Slovak wording needs them). Rendering is deterministic for a given
 * creation date, so the PDF of a version rendered at upload keeps the SHA-256 stored as its fingerprint.
 */
import crypto from 'node:crypto';
import { loadFonts, newPdfDocument } from '../../documents/pdf.js';

/** One printable block of wording: a heading, a paragraph or a list item (with its bullet or number). */
export interface WordingBlock {
  kind: 'heading' | 'paragraph' | 'item';
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'', nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const BLOCK_TAGS = new Set(['p', 'h2', 'h3', 'h4', 'li', 'blockquote', 'tr']);

/**
 * The blocks of HTML that `sanitiseHtml` (src/affiliate/writes/text.ts) produced. Its output is well formed and has
 * every `<` of the text escaped, so a tag scan is exact here; it is not meant for raw, unsanitised HTML.
 */
export function htmlBlocks(sanitisedHtml: string): WordingBlock[] {
  const blocks: WordingBlock[] = [];
  let current: WordingBlock | null = null;
  const lists: Array<{ ordered: boolean; n: number }> = [];
  const flush = () => {
    if (current) {
      // Whitespace folds to one space, as a browser shows it; a <br> (U+2028 here) stays a line break.
      const text = current.text.split('\u2028').map((line) => line.replace(/[ \t\r\n\u00a0]+/g, ' ').trim()).join('\n').trim();
      if (text) blocks.push({ kind: current.kind, text });
    }
    current = null;
  };
  const open = (kind: WordingBlock['kind'], prefix = '') => {
    flush();
    current = { kind, text: prefix };
  };
  for (const m of sanitisedHtml.matchAll(/<(\/?)([a-z0-9]+)[^>]*>|([^<]+)/gi)) {
    if (m[3] !== undefined) {
      current ??= { kind: 'paragraph', text: '' };
      current.text += decodeEntities(m[3]);
      continue;
    }
    const closing = m[1] === '/';
    const tag = m[2].toLowerCase();
    if (tag === 'ul' || tag === 'ol') {
      flush();
      if (closing) lists.pop();
      else lists.push({ ordered: tag === 'ol', n: 0 });
    } else if (tag === 'br') {
      current ??= { kind: 'paragraph', text: '' };
      current.text += '\u2028';
    } else if (tag === 'hr') {
      flush();
    } else if (tag === 'td' || tag === 'th') {
      if (!closing && current && current.text.trim()) current.text += ' | ';
    } else if (BLOCK_TAGS.has(tag)) {
      if (closing) flush();
      else if (tag === 'li') {
        const list = lists[lists.length - 1];
        if (list) list.n += 1;
        open('item', list?.ordered ? `${list.n}. ` : '• ');
      } else open(tag.startsWith('h') ? 'heading' : 'paragraph');
    }
  }
  flush();
  return blocks;
}

/** Blocks of plain text: paragraphs are separated by blank lines (the demo's wording and signed copies are text). */
export function textBlocks(text: string): WordingBlock[] {
  return text.replace(/\r\n?/g, '\n').split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean).map((p) => ({ kind: 'paragraph' as const, text: p }));
}

/** The plain text of blocks: what a signature keeps and the portal shows. */
export function blocksText(blocks: WordingBlock[]): string {
  return blocks.map((b) => b.text).join('\n\n');
}

export interface WordingPdfInput {
  title: string;
  /** A line under the title, e.g. "Version 3 · sk" or who signed it and when. */
  subtitle: string;
  blocks: WordingBlock[];
  /** The PDF's creation date: the version's, so the same version renders the same bytes. */
  createdAt: Date;
  /** Lines at the end (a signed copy's signature record). */
  footer?: string[];
}

export interface RenderedWordingPdf {
  content: Buffer;
  sha256: string;
  pages: number;
}

/** Renders wording as an A4 PDF with the embedded fonts. */
export function renderWordingPdf(input: WordingPdfInput): Promise<RenderedWordingPdf> {
  const { regular, bold } = loadFonts();
  const doc = newPdfDocument({
    size: 'A4', margin: 50, compress: true,
    info: { Title: input.title, Creator: 'store-operations data service', Producer: 'pdfkit', CreationDate: input.createdAt, ModDate: input.createdAt },
  });
  const chunks: Buffer[] = [];
  let pages = 1;
  doc.on('pageAdded', () => { pages += 1; });
  const done = new Promise<RenderedWordingPdf>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('error', reject);
    doc.on('end', () => {
      const content = Buffer.concat(chunks);
      resolve({ content, sha256: crypto.createHash('sha256').update(content).digest('hex'), pages });
    });
  });
  doc.registerFont('regular', regular);
  doc.registerFont('bold', bold);
  doc.font('bold').fontSize(16).text(input.title);
  doc.font('regular').fontSize(9).fillColor('#555555').text(input.subtitle).fillColor('#000000');
  doc.moveDown(1);
  for (const block of input.blocks) {
    if (block.kind === 'heading') doc.font('bold').fontSize(12).text(block.text).moveDown(0.4);
    else doc.font('regular').fontSize(10.5).text(block.text, { indent: block.kind === 'item' ? 12 : 0 }).moveDown(block.kind === 'item' ? 0.2 : 0.6);
  }
  if (input.footer?.length) {
    doc.moveDown(1).font('regular').fontSize(8.5).fillColor('#555555');
    for (const line of input.footer) doc.text(line);
  }
  doc.end();
  return done;
}
