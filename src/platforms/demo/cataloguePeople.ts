/** Names, places and contact formats per country, so demo customers look like the shop's real ones. */
import type { CountryCode } from './catalogue.js';

export interface CountryPeople {
  maleFirstNames: string[];
  femaleFirstNames: string[];
  /** [male form, female form]; identical where the language has no female surname form. */
  lastNames: Array<[string, string]>;
  /** Cities with a postcode and a weight (capitals dominate). */
  cities: Array<{ name: string; zip: string; weight: number }>;
  streets: string[];
  /** Builds a mobile number from random digits. */
  phone: { prefix: string; mobile: string[]; groups: number[] };
  emailDomains: Array<{ domain: string; weight: number }>;
  companyForm: string;
}

export const PEOPLE: Record<CountryCode, CountryPeople> = {
  SK: {
    maleFirstNames: ['Peter', 'Martin', 'Tomáš', 'Michal', 'Ján', 'Jozef', 'Lukáš', 'Marek', 'Juraj', 'Andrej', 'Matej', 'Filip'],
    femaleFirstNames: ['Jana', 'Mária', 'Zuzana', 'Katarína', 'Lucia', 'Eva', 'Veronika', 'Monika', 'Barbora', 'Simona', 'Martina', 'Petra'],
    lastNames: [
      ['Horváth', 'Horváthová'], ['Kováč', 'Kováčová'], ['Varga', 'Vargová'], ['Tóth', 'Tóthová'], ['Baláž', 'Balážová'],
      ['Molnár', 'Molnárová'], ['Novák', 'Nováková'], ['Kučera', 'Kučerová'], ['Lukáč', 'Lukáčová'], ['Gajdoš', 'Gajdošová'],
      ['Polák', 'Poláková'], ['Hudák', 'Hudáková'], ['Král', 'Králová'], ['Oravec', 'Oravcová'],
    ],
    cities: [
      { name: 'Bratislava', zip: '811 01', weight: 22 }, { name: 'Košice', zip: '040 01', weight: 10 },
      { name: 'Prešov', zip: '080 01', weight: 6 }, { name: 'Žilina', zip: '010 01', weight: 6 },
      { name: 'Nitra', zip: '949 01', weight: 6 }, { name: 'Banská Bystrica', zip: '974 01', weight: 5 },
      { name: 'Trnava', zip: '917 01', weight: 5 }, { name: 'Trenčín', zip: '911 01', weight: 4 },
      { name: 'Martin', zip: '036 01', weight: 3 }, { name: 'Poprad', zip: '058 01', weight: 3 },
      { name: 'Piešťany', zip: '921 01', weight: 2 }, { name: 'Zvolen', zip: '960 01', weight: 3 },
    ],
    streets: ['Hlavná', 'Štúrova', 'Hviezdoslavova', 'Mierová', 'Záhradná', 'SNP', 'Obchodná', 'Dlhá', 'Partizánska', 'Školská', 'Jesenského', 'Kpt. Nálepku'],
    phone: { prefix: '+421', mobile: ['903', '905', '908', '910', '915', '944', '948', '950'], groups: [3, 3] },
    emailDomains: [
      { domain: 'gmail.com', weight: 45 }, { domain: 'azet.sk', weight: 20 }, { domain: 'centrum.sk', weight: 12 },
      { domain: 'zoznam.sk', weight: 8 }, { domain: 'post.sk', weight: 5 }, { domain: 'outlook.com', weight: 10 },
    ],
    companyForm: 's.r.o.',
  },
  CZ: {
    maleFirstNames: ['Jan', 'Petr', 'Jiří', 'Pavel', 'Tomáš', 'Martin', 'Jakub', 'Lukáš', 'David', 'Ondřej', 'Michal', 'Václav'],
    femaleFirstNames: ['Jana', 'Eva', 'Hana', 'Anna', 'Lenka', 'Kateřina', 'Lucie', 'Petra', 'Veronika', 'Tereza', 'Markéta', 'Alena'],
    lastNames: [
      ['Novák', 'Nováková'], ['Svoboda', 'Svobodová'], ['Novotný', 'Novotná'], ['Dvořák', 'Dvořáková'], ['Černý', 'Černá'],
      ['Procházka', 'Procházková'], ['Kučera', 'Kučerová'], ['Veselý', 'Veselá'], ['Horák', 'Horáková'], ['Němec', 'Němcová'],
      ['Marek', 'Marková'], ['Pokorný', 'Pokorná'], ['Král', 'Králová'], ['Růžička', 'Růžičková'],
    ],
    cities: [
      { name: 'Praha', zip: '110 00', weight: 25 }, { name: 'Brno', zip: '602 00', weight: 10 },
      { name: 'Ostrava', zip: '702 00', weight: 7 }, { name: 'Plzeň', zip: '301 00', weight: 5 },
      { name: 'Liberec', zip: '460 01', weight: 3 }, { name: 'Olomouc', zip: '779 00', weight: 3 },
      { name: 'České Budějovice', zip: '370 01', weight: 3 }, { name: 'Hradec Králové', zip: '500 02', weight: 3 },
      { name: 'Ústí nad Labem', zip: '400 01', weight: 2 }, { name: 'Pardubice', zip: '530 02', weight: 3 },
      { name: 'Zlín', zip: '760 01', weight: 2 }, { name: 'Kladno', zip: '272 01', weight: 2 },
    ],
    streets: ['Masarykova', 'Husova', 'Nádražní', 'Palackého', 'Komenského', 'Havlíčkova', 'Riegrova', 'Smetanova', 'Jiráskova', 'Sokolská', 'Školní', 'Zahradní'],
    phone: { prefix: '+420', mobile: ['601', '603', '605', '608', '702', '721', '731', '775', '777'], groups: [3, 3] },
    emailDomains: [
      { domain: 'seznam.cz', weight: 40 }, { domain: 'gmail.com', weight: 30 }, { domain: 'email.cz', weight: 12 },
      { domain: 'centrum.cz', weight: 8 }, { domain: 'post.cz', weight: 5 }, { domain: 'outlook.com', weight: 5 },
    ],
    companyForm: 's.r.o.',
  },
  HU: {
    maleFirstNames: ['László', 'István', 'József', 'Zoltán', 'Péter', 'Gábor', 'Attila', 'Tamás', 'Balázs', 'Dávid', 'Ádám', 'Bence'],
    femaleFirstNames: ['Mária', 'Erzsébet', 'Katalin', 'Éva', 'Anna', 'Zsuzsanna', 'Andrea', 'Eszter', 'Krisztina', 'Réka', 'Nóra', 'Dóra'],
    lastNames: [
      ['Nagy', 'Nagy'], ['Kovács', 'Kovács'], ['Tóth', 'Tóth'], ['Szabó', 'Szabó'], ['Horváth', 'Horváth'], ['Varga', 'Varga'],
      ['Kiss', 'Kiss'], ['Molnár', 'Molnár'], ['Németh', 'Németh'], ['Farkas', 'Farkas'], ['Balogh', 'Balogh'], ['Papp', 'Papp'],
      ['Takács', 'Takács'], ['Juhász', 'Juhász'],
    ],
    cities: [
      { name: 'Budapest', zip: '1051', weight: 30 }, { name: 'Debrecen', zip: '4024', weight: 6 },
      { name: 'Szeged', zip: '6720', weight: 5 }, { name: 'Miskolc', zip: '3525', weight: 5 },
      { name: 'Pécs', zip: '7621', weight: 4 }, { name: 'Győr', zip: '9021', weight: 4 },
      { name: 'Nyíregyháza', zip: '4400', weight: 3 }, { name: 'Kecskemét', zip: '6000', weight: 3 },
      { name: 'Székesfehérvár', zip: '8000', weight: 3 }, { name: 'Szombathely', zip: '9700', weight: 2 },
      { name: 'Eger', zip: '3300', weight: 2 }, { name: 'Sopron', zip: '9400', weight: 2 },
    ],
    streets: ['Kossuth Lajos utca', 'Petőfi Sándor utca', 'Rákóczi út', 'Dózsa György út', 'Széchenyi utca', 'Ady Endre utca', 'Arany János utca', 'Jókai utca', 'Bajcsy-Zsilinszky út', 'Fő utca', 'Kölcsey utca', 'Táncsics Mihály utca'],
    phone: { prefix: '+36', mobile: ['20', '30', '70'], groups: [3, 4] },
    emailDomains: [
      { domain: 'gmail.com', weight: 50 }, { domain: 'freemail.hu', weight: 25 }, { domain: 'citromail.hu', weight: 10 },
      { domain: 't-online.hu', weight: 5 }, { domain: 'outlook.com', weight: 10 },
    ],
    companyForm: 'Kft.',
  },
  PL: {
    maleFirstNames: ['Piotr', 'Krzysztof', 'Andrzej', 'Tomasz', 'Paweł', 'Michał', 'Marcin', 'Jakub', 'Adam', 'Łukasz', 'Kamil', 'Mateusz'],
    femaleFirstNames: ['Anna', 'Maria', 'Katarzyna', 'Małgorzata', 'Agnieszka', 'Barbara', 'Ewa', 'Magdalena', 'Joanna', 'Aleksandra', 'Natalia', 'Monika'],
    lastNames: [
      ['Nowak', 'Nowak'], ['Kowalski', 'Kowalska'], ['Wiśniewski', 'Wiśniewska'], ['Wójcik', 'Wójcik'], ['Kowalczyk', 'Kowalczyk'],
      ['Kamiński', 'Kamińska'], ['Lewandowski', 'Lewandowska'], ['Zieliński', 'Zielińska'], ['Szymański', 'Szymańska'],
      ['Woźniak', 'Woźniak'], ['Dąbrowski', 'Dąbrowska'], ['Kozłowski', 'Kozłowska'], ['Mazur', 'Mazur'], ['Jankowski', 'Jankowska'],
    ],
    cities: [
      { name: 'Warszawa', zip: '00-001', weight: 20 }, { name: 'Kraków', zip: '30-001', weight: 9 },
      { name: 'Łódź', zip: '90-001', weight: 7 }, { name: 'Wrocław', zip: '50-001', weight: 7 },
      { name: 'Poznań', zip: '60-001', weight: 6 }, { name: 'Gdańsk', zip: '80-001', weight: 5 },
      { name: 'Szczecin', zip: '70-001', weight: 4 }, { name: 'Lublin', zip: '20-001', weight: 4 },
      { name: 'Katowice', zip: '40-001', weight: 4 }, { name: 'Białystok', zip: '15-001', weight: 3 },
      { name: 'Rzeszów', zip: '35-001', weight: 3 }, { name: 'Toruń', zip: '87-100', weight: 2 },
    ],
    streets: ['ul. Marszałkowska', 'ul. Długa', 'ul. Polna', 'ul. Leśna', 'ul. Słoneczna', 'ul. Krótka', 'ul. Szkolna', 'ul. Ogrodowa', 'ul. Lipowa', 'ul. Kościuszki', 'ul. Mickiewicza', 'ul. Sienkiewicza'],
    phone: { prefix: '+48', mobile: ['501', '502', '505', '600', '601', '660', '691', '730', '790', '880'], groups: [3, 3] },
    emailDomains: [
      { domain: 'gmail.com', weight: 35 }, { domain: 'wp.pl', weight: 22 }, { domain: 'onet.pl', weight: 15 },
      { domain: 'o2.pl', weight: 12 }, { domain: 'interia.pl', weight: 11 }, { domain: 'outlook.com', weight: 5 },
    ],
    companyForm: 'sp. z o.o.',
  },
};
