/**
 * XML output of the rate service. No shape is published, so elements are named after the schema
 * (`ExchangeRate`, `ExchangeRates`, `ArrayOfTimeseriesPeriod`,
 * `ArrayOfExchangeRatesTimeseriesItem`, `RateExplanation`; the metrics arrays `ArrayOfMetric`,
 * `ArrayOfListingItem`, `ArrayOfGeneralData`, `ArrayOfMetricByExchange`, `ArrayOfMetricData`, and
 * `GroupedMetrics` whose `series_label` holds `string` elements and `rows` one
 * `ArrayOfMetricData` per label; the symbols arrays `ArrayOfSymbol`, `ArrayOfSymbolMapping`);
 * arrays are wrapper elements holding one element per item; a null is `<x xsi:nil="true"/>`
 * (docs/service.md).
 *
 * @module
 */
import { XMLBuilder } from 'fast-xml-parser';
import type { PayloadKind } from './negotiate.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const ROOTS: Record<PayloadKind, string> = {
  rate: 'ExchangeRate',
  rates: 'ExchangeRates',
  periods: 'ArrayOfTimeseriesPeriod',
  history: 'ArrayOfExchangeRatesTimeseriesItem',
  explain: 'RateExplanation',
  metrics: 'ArrayOfMetric',
  metric_exchange_listing: 'ArrayOfListingItem',
  metric_symbol_listing: 'ArrayOfListingItem',
  metric_asset_listing: 'ArrayOfListingItem',
  metric_current: 'ArrayOfGeneralData',
  metric_by_exchange: 'ArrayOfMetricByExchange',
  metric_history: 'ArrayOfMetricData',
  metric_groups: 'GroupedMetrics',
  symbols: 'ArrayOfSymbol',
  symbol_map: 'ArrayOfSymbolMapping',
};
const TOP_ITEMS: Partial<Record<PayloadKind, string>> = {
  periods: 'TimeseriesPeriod',
  history: 'ExchangeRatesTimeseriesItem',
  metrics: 'Metric',
  metric_exchange_listing: 'ListingItem',
  metric_symbol_listing: 'ListingItem',
  metric_asset_listing: 'ListingItem',
  metric_current: 'GeneralData',
  metric_by_exchange: 'MetricByExchange',
  metric_history: 'MetricData',
  symbols: 'Symbol',
  symbol_map: 'SymbolMapping',
};
const ITEM_NAMES: Record<string, string> = {
  series_label: 'string',
  rows: 'ArrayOfMetricData',
  ArrayOfMetricData: 'MetricData',
  rates: 'ExchangeRatesRate',
  path: 'asset_id',
  legs: 'LegExplanation',
  used: 'MarketProvenance',
  excluded: 'MarketProvenance',
};

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  suppressBooleanAttributes: false,
  suppressEmptyNode: true,
  format: false,
  processEntities: true,
});

function xmlTree(v: unknown, field: string): unknown {
  if (v === null || v === undefined) return { '@_xsi:nil': 'true' };
  if (Array.isArray(v)) {
    const item = ITEM_NAMES[field] ?? 'item';
    return { [item]: v.map((x) => xmlTree(x, item)) };
  }
  if (typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) o[k] = xmlTree(x, k);
    return o;
  }
  return v;
}

/** XML text of a payload (see the module description for the shape). */
export function toXml(kind: PayloadKind, value: unknown): string {
  const root = ROOTS[kind];
  const item = TOP_ITEMS[kind];
  const body = item ? { [item]: (value as unknown[]).map((x) => xmlTree(x, item)) } : (xmlTree(value, root) as Record<string, unknown>);
  return builder.build({ '?xml': { '@_version': '1.0', '@_encoding': 'utf-8' }, [root]: { '@_xmlns:xsi': XSI, ...body } }) as string;
}

/**
 * The XML of a non-empty history (ExchangeRatesTimeseriesItem[]) in pieces, for a long answer
 * written a slice at a time: the document up to its first item (`head`), the elements of each
 * run of items, and the end of the document (`tail`). The pieces joined are {@link toXml} of the
 * whole array.
 *
 * @param first - the first item of the array (the head is cut from the document of it alone)
 */
export function xmlHistoryPieces(first: unknown): { head: string; items: (items: readonly unknown[]) => string; tail: string } {
  const item = TOP_ITEMS.history!;
  const items = (xs: readonly unknown[]): string => builder.build({ [item]: xs.map((x) => xmlTree(x, item)) }) as string;
  const tail = `</${ROOTS.history}>`;
  const one = toXml('history', [first]);
  return { head: one.slice(0, one.length - tail.length - items([first]).length), items, tail };
}
