/** Static catalogue of the demo shops: a home, kitchen and garden assortment in the four shop languages. */
import type { Language } from './catalogue.js';

/** Which of the shop's VAT rates applies: standard, first reduced, second reduced (falls back to the last one). */
export type VatClass = 0 | 1 | 2;

export interface CategoryDefinition {
  key: string;
  parent: string | null;
  names: Record<Language, string>;
  vatClass: VatClass;
}

export interface ProductBase {
  category: string;
  names: Record<Language, string>;
  /** Price range with VAT in EUR of the smallest size; converted and rounded per shop. */
  priceEur: [number, number];
  /** Language-neutral size labels; '' means no size in the name. */
  sizes: string[];
  /** Sold under its own name only (books, seeds): no product line is appended. */
  plain?: boolean;
}

const n = (sk: string, cs: string, hu: string, pl: string): Record<Language, string> => ({ sk, cs, hu, pl });

/** 20 categories, two levels deep; books and seeds carry reduced VAT as they do in these countries. */
export const CATEGORIES: CategoryDefinition[] = [
  { key: 'kitchen', parent: null, names: n('Kuchyňa', 'Kuchyně', 'Konyha', 'Kuchnia'), vatClass: 0 },
  { key: 'cookware', parent: 'kitchen', names: n('Hrnce a panvice', 'Hrnce a pánve', 'Edények és serpenyők', 'Garnki i patelnie'), vatClass: 0 },
  { key: 'knives', parent: 'kitchen', names: n('Nože a dosky', 'Nože a prkénka', 'Kések és vágódeszkák', 'Noże i deski'), vatClass: 0 },
  { key: 'baking', parent: 'kitchen', names: n('Pečenie', 'Pečení', 'Sütés', 'Pieczenie'), vatClass: 0 },
  { key: 'tools', parent: 'kitchen', names: n('Kuchynské pomôcky', 'Kuchyňské pomůcky', 'Konyhai eszközök', 'Akcesoria kuchenne'), vatClass: 0 },
  { key: 'coffee', parent: 'kitchen', names: n('Káva a čaj', 'Káva a čaj', 'Kávé és tea', 'Kawa i herbata'), vatClass: 0 },
  { key: 'dining', parent: null, names: n('Stolovanie', 'Stolování', 'Terítés', 'Zastawa stołowa'), vatClass: 0 },
  { key: 'plates', parent: 'dining', names: n('Taniere a misky', 'Talíře a misky', 'Tányérok és tálak', 'Talerze i miski'), vatClass: 0 },
  { key: 'glasses', parent: 'dining', names: n('Poháre a hrnčeky', 'Sklenice a hrnky', 'Poharak és bögrék', 'Szklanki i kubki'), vatClass: 0 },
  { key: 'garden', parent: null, names: n('Záhrada', 'Zahrada', 'Kert', 'Ogród'), vatClass: 0 },
  { key: 'garden_tools', parent: 'garden', names: n('Záhradné náradie', 'Zahradní nářadí', 'Kerti szerszámok', 'Narzędzia ogrodowe'), vatClass: 0 },
  { key: 'watering', parent: 'garden', names: n('Zavlažovanie', 'Zavlažování', 'Öntözés', 'Nawadnianie'), vatClass: 0 },
  { key: 'seeds', parent: 'garden', names: n('Semená a sadenice', 'Semena a sazenice', 'Vetőmagok és palánták', 'Nasiona i sadzonki'), vatClass: 1 },
  { key: 'planters', parent: 'garden', names: n('Kvetináče', 'Květináče', 'Virágcserepek', 'Doniczki'), vatClass: 0 },
  { key: 'home', parent: null, names: n('Domácnosť', 'Domácnost', 'Háztartás', 'Dom'), vatClass: 0 },
  { key: 'storage', parent: 'home', names: n('Úložné boxy', 'Úložné boxy', 'Tárolás', 'Przechowywanie'), vatClass: 0 },
  { key: 'cleaning', parent: 'home', names: n('Upratovanie', 'Úklid', 'Takarítás', 'Sprzątanie'), vatClass: 0 },
  { key: 'textiles', parent: 'home', names: n('Bytový textil', 'Bytový textil', 'Lakástextil', 'Tekstylia domowe'), vatClass: 0 },
  { key: 'books', parent: null, names: n('Knihy', 'Knihy', 'Könyvek', 'Książki'), vatClass: 2 },
  { key: 'cookbooks', parent: 'books', names: n('Kuchárky', 'Kuchařky', 'Szakácskönyvek', 'Książki kucharskie'), vatClass: 2 },
];

/** Product lines: language-neutral names that multiply the bases into a believable assortment. */
export const PRODUCT_LINES: Array<{ name: string; priceFactor: number }> = [
  { name: 'Classic', priceFactor: 1 },
  { name: 'Nordic', priceFactor: 1.15 },
  { name: 'Premium', priceFactor: 1.45 },
  { name: 'Eco', priceFactor: 1.1 },
  { name: 'Terra', priceFactor: 1.05 },
  { name: 'Bistro', priceFactor: 0.9 },
  { name: 'Rustic', priceFactor: 1.2 },
  { name: 'Aqua', priceFactor: 0.95 },
];

/** Product bases; the generator combines them with lines and sizes. */
export const PRODUCT_BASES: ProductBase[] = [
  { category: 'cookware', names: n('Panvica', 'Pánev', 'Serpenyő', 'Patelnia'), priceEur: [19, 49], sizes: ['20 cm', '24 cm', '28 cm'] },
  { category: 'cookware', names: n('Hrniec', 'Hrnec', 'Fazék', 'Garnek'), priceEur: [22, 59], sizes: ['2 l', '3,5 l', '5 l'] },
  { category: 'cookware', names: n('Wok', 'Wok', 'Wok', 'Wok'), priceEur: [29, 69], sizes: ['28 cm', '32 cm'] },
  { category: 'cookware', names: n('Liatinový hrniec', 'Litinový hrnec', 'Öntöttvas edény', 'Garnek żeliwny'), priceEur: [59, 139], sizes: ['3 l', '5 l'] },
  { category: 'knives', names: n('Kuchársky nôž', 'Kuchařský nůž', 'Szakácskés', 'Nóż szefa kuchni'), priceEur: [24, 89], sizes: ['15 cm', '20 cm'] },
  { category: 'knives', names: n('Nôž na chlieb', 'Nůž na chléb', 'Kenyérvágó kés', 'Nóż do chleba'), priceEur: [18, 49], sizes: [''] },
  { category: 'knives', names: n('Brúska na nože', 'Brousek na nože', 'Késélező', 'Ostrzałka do noży'), priceEur: [12, 39], sizes: [''] },
  { category: 'knives', names: n('Doska na krájanie', 'Prkénko na krájení', 'Vágódeszka', 'Deska do krojenia'), priceEur: [9, 29], sizes: ['30 cm', '40 cm'] },
  { category: 'baking', names: n('Plech na pečenie', 'Plech na pečení', 'Sütőtálca', 'Blacha do pieczenia'), priceEur: [9, 24], sizes: ['35 cm', '40 cm'] },
  { category: 'baking', names: n('Forma na tortu', 'Dortová forma', 'Tortaforma', 'Tortownica'), priceEur: [11, 29], sizes: ['22 cm', '24 cm', '26 cm'] },
  { category: 'baking', names: n('Forma na muffiny', 'Forma na muffiny', 'Muffinsütő forma', 'Forma do muffinek'), priceEur: [8, 19], sizes: [''] },
  { category: 'baking', names: n('Valček na cesto', 'Váleček na těsto', 'Nyújtófa', 'Wałek do ciasta'), priceEur: [6, 18], sizes: [''] },
  { category: 'tools', names: n('Metla', 'Metla', 'Habverő', 'Trzepaczka'), priceEur: [5, 14], sizes: ['25 cm', '30 cm'] },
  { category: 'tools', names: n('Strúhadlo', 'Struhadlo', 'Reszelő', 'Tarka'), priceEur: [7, 22], sizes: [''] },
  { category: 'tools', names: n('Kuchynská váha', 'Kuchyňská váha', 'Konyhai mérleg', 'Waga kuchenna'), priceEur: [15, 45], sizes: ['5 kg', '10 kg'] },
  { category: 'tools', names: n('Sada obracačiek', 'Sada obracečk', 'Spatula készlet', 'Zestaw łopatek'), priceEur: [12, 29], sizes: [''] },
  { category: 'coffee', names: n('French press', 'French press', 'Dugattyús kávéfőző', 'Zaparzacz French press'), priceEur: [16, 45], sizes: ['0,35 l', '0,8 l', '1 l'] },
  { category: 'coffee', names: n('Čajník', 'Konvice na čaj', 'Teáskanna', 'Dzbanek do herbaty'), priceEur: [14, 39], sizes: ['0,8 l', '1,2 l'] },
  { category: 'coffee', names: n('Mlynček na kávu', 'Mlýnek na kávu', 'Kávédaráló', 'Młynek do kawy'), priceEur: [19, 79], sizes: [''] },
  { category: 'coffee', names: n('Zrnková káva', 'Zrnková káva', 'Szemes kávé', 'Kawa ziarnista'), priceEur: [7, 16], sizes: ['250 g', '500 g', '1 kg'] },
  { category: 'plates', names: n('Plytký tanier', 'Mělký talíř', 'Lapostányér', 'Talerz płaski'), priceEur: [5, 14], sizes: ['21 cm', '27 cm'] },
  { category: 'plates', names: n('Miska', 'Miska', 'Tál', 'Miska'), priceEur: [4, 12], sizes: ['14 cm', '18 cm'] },
  { category: 'plates', names: n('Jedálenská súprava', 'Jídelní souprava', 'Étkészlet', 'Zestaw obiadowy'), priceEur: [49, 149], sizes: ['12 ks', '18 ks'] },
  { category: 'glasses', names: n('Poháre na víno', 'Sklenice na víno', 'Borospohár', 'Kieliszki do wina'), priceEur: [14, 39], sizes: ['2 ks', '6 ks'] },
  { category: 'glasses', names: n('Poháre na vodu', 'Sklenice na vodu', 'Vizespohár', 'Szklanki do wody'), priceEur: [9, 24], sizes: ['4 ks', '6 ks'] },
  { category: 'glasses', names: n('Hrnček', 'Hrnek', 'Bögre', 'Kubek'), priceEur: [6, 15], sizes: ['300 ml', '450 ml'] },
  { category: 'garden_tools', names: n('Záhradnícke nožnice', 'Zahradní nůžky', 'Metszőolló', 'Sekator'), priceEur: [14, 49], sizes: [''] },
  { category: 'garden_tools', names: n('Rýľ', 'Rýč', 'Ásó', 'Szpadel'), priceEur: [19, 45], sizes: [''] },
  { category: 'garden_tools', names: n('Hrable', 'Hrábě', 'Gereblye', 'Grabie'), priceEur: [12, 29], sizes: [''] },
  { category: 'garden_tools', names: n('Záhradné rukavice', 'Zahradní rukavice', 'Kerti kesztyű', 'Rękawice ogrodowe'), priceEur: [5, 14], sizes: ['S', 'M', 'L', 'XL'] },
  { category: 'watering', names: n('Záhradná hadica', 'Zahradní hadice', 'Kerti tömlő', 'Wąż ogrodowy'), priceEur: [19, 69], sizes: ['15 m', '25 m', '50 m'] },
  { category: 'watering', names: n('Krhla', 'Konev', 'Locsolókanna', 'Konewka'), priceEur: [7, 24], sizes: ['5 l', '10 l'] },
  { category: 'watering', names: n('Postrekovač', 'Postřikovač', 'Locsolófej', 'Zraszacz'), priceEur: [9, 39], sizes: [''] },
  { category: 'seeds', names: n('Semená paradajok', 'Semena rajčat', 'Paradicsom vetőmag', 'Nasiona pomidorów'), priceEur: [2, 5], sizes: [''], plain: true },
  { category: 'seeds', names: n('Sadenica bazalky', 'Sazenice bazalky', 'Bazsalikom palánta', 'Sadzonka bazylii'), priceEur: [3, 7], sizes: [''], plain: true },
  { category: 'seeds', names: n('Trávové osivo', 'Travní osivo', 'Fűmag', 'Nasiona trawy'), priceEur: [8, 19], sizes: ['1 kg', '5 kg'], plain: true },
  { category: 'planters', names: n('Kvetináč', 'Květináč', 'Virágcserép', 'Doniczka'), priceEur: [4, 19], sizes: ['14 cm', '18 cm', '24 cm', '30 cm'] },
  { category: 'planters', names: n('Vyvýšený záhon', 'Vyvýšený záhon', 'Magaságyás', 'Podwyższona grządka'), priceEur: [59, 189], sizes: ['100 cm', '150 cm'] },
  { category: 'storage', names: n('Úložný box', 'Úložný box', 'Tárolódoboz', 'Pojemnik do przechowywania'), priceEur: [6, 22], sizes: ['5 l', '10 l', '20 l'] },
  { category: 'storage', names: n('Dóza na potraviny', 'Dóza na potraviny', 'Ételtároló doboz', 'Pojemnik na żywność'), priceEur: [4, 14], sizes: ['0,5 l', '1 l', '2 l'] },
  { category: 'cleaning', names: n('Mop', 'Mop', 'Felmosó', 'Mop'), priceEur: [14, 39], sizes: [''] },
  { category: 'cleaning', names: n('Utierky z mikrovlákna', 'Utěrky z mikrovlákna', 'Mikroszálas kendő', 'Ściereczki z mikrofibry'), priceEur: [5, 12], sizes: ['3 ks', '5 ks'] },
  { category: 'textiles', names: n('Kuchynská utierka', 'Kuchyňská utěrka', 'Konyharuha', 'Ścierka kuchenna'), priceEur: [4, 9], sizes: [''] },
  { category: 'textiles', names: n('Obrus', 'Ubrus', 'Asztalterítő', 'Obrus'), priceEur: [14, 39], sizes: ['140×180 cm', '140×240 cm'] },
  { category: 'textiles', names: n('Zástera', 'Zástěra', 'Kötény', 'Fartuch'), priceEur: [9, 22], sizes: [''] },
  { category: 'cookbooks', names: n('Kuchárka: Rýchle večere', 'Kuchařka: Rychlé večeře', 'Szakácskönyv: Gyors vacsorák', 'Książka kucharska: Szybkie kolacje'), priceEur: [14, 24], sizes: [''], plain: true },
  { category: 'cookbooks', names: n('Pečieme doma', 'Pečeme doma', 'Otthoni sütés', 'Pieczemy w domu'), priceEur: [16, 26], sizes: [''], plain: true },
  { category: 'books', names: n('Záhrada po celý rok', 'Zahrada po celý rok', 'Kert egész évben', 'Ogród przez cały rok'), priceEur: [15, 29], sizes: [''], plain: true },
];
