/** The help desk's knowledge base: what kb_search finds and kb://articles/{id} reads. */
export interface Article {
  id: string;
  title: string;
  text: string;
}

export const ARTICLES: readonly Article[] = [
  {
    id: 'reset-password',
    title: 'Resetting your password',
    text: 'Open Settings, then Security, and choose "Reset password". The link in the email works for one hour.',
  },
  {
    id: 'export-data',
    title: 'Exporting your data',
    text: 'Settings, then Data, then "Export": you get a ZIP of CSV files by email within ten minutes.',
  },
  {
    id: 'invoices',
    title: 'Where to find your invoices',
    text: 'Billing, then Invoices: every invoice as a PDF. Invoices are issued on the first day of the month.',
  },
];

/** Articles whose title or text has every word of `query`, best (most title words) first. */
export function search(query: string, limit: number): Article[] {
  const words = query.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const score = (a: Article) => words.filter((w) => a.title.toLowerCase().includes(w)).length;
  return ARTICLES.filter((a) => words.every((w) => `${a.title} ${a.text}`.toLowerCase().includes(w)))
    .sort((a, b) => score(b) - score(a))
    .slice(0, limit);
}
