import {
  type FilterFractions,
  filterFractionsOf,
  fractionsOf,
  MAX_SCAN_FACTOR,
  scanFactorOf,
} from './order-page-estimate';
import { SCAN_FACTOR } from './order-page.sql';

/** A store spread as the bench's: 60 % shipped, 25 % pending, 15 % cancelled; 48 % complete. */
const STORE: FilterFractions = {
  status: new Map([
    ['shipped', 0.6],
    ['pending', 0.25],
    ['cancelled', 0.15],
  ]),
  complete: new Map([
    ['false', 0.52],
    ['true', 0.48],
  ]),
};

describe('scanFactorOf', () => {
  it('keeps the least work where the filter matches enough orders, or there is none', () => {
    expect(scanFactorOf({}, STORE)).toBe(SCAN_FACTOR);
    expect(scanFactorOf({ petId: '7', shipDateFrom: '2026-01-01T00:00:00Z' }, STORE)).toBe(
      SCAN_FACTOR,
    );
    expect(scanFactorOf({ statuses: ['shipped'] }, STORE)).toBe(SCAN_FACTOR);
    expect(scanFactorOf({ statuses: ['pending', 'cancelled'] }, STORE)).toBe(SCAN_FACTOR);
    expect(scanFactorOf({ complete: true }, STORE)).toBe(SCAN_FACTOR);
  });

  it('examines enough for a sparse status to fill the page, with a margin', () => {
    expect(scanFactorOf({ statuses: ['pending'] }, STORE)).toBe(5);
  });

  it('keeps the least work where the most it may examine would not fill the page', () => {
    // 15 %: 5 × 15 % is short of the margin, so more work would still end the page short.
    expect(scanFactorOf({ statuses: ['cancelled'] }, STORE)).toBe(SCAN_FACTOR);
  });

  it('takes two filters to be independent, as the planner does', () => {
    // 60 % × 48 %: 28.8 %.
    expect(scanFactorOf({ statuses: ['shipped'], complete: true }, STORE)).toBe(5);
    // 15 % × 52 %: 7.8 %, too few to fill a page even at the most.
    expect(scanFactorOf({ statuses: ['cancelled'], complete: false }, STORE)).toBe(SCAN_FACTOR);
  });

  it('spends no more where even the most would leave the page short', () => {
    const rare: FilterFractions = { ...STORE, status: new Map([['pending', 0.99]]) };
    expect(scanFactorOf({ statuses: ['cancelled'] }, rare)).toBe(SCAN_FACTOR);
    const justEnough: FilterFractions = { ...STORE, status: new Map([['cancelled', 0.24]]) };
    expect(scanFactorOf({ statuses: ['cancelled'] }, justEnough)).toBe(MAX_SCAN_FACTOR);
  });

  it('keeps the least work without statistics', () => {
    expect(scanFactorOf({ statuses: ['cancelled'] }, undefined)).toBe(SCAN_FACTOR);
    const none: FilterFractions = { status: new Map(), complete: new Map() };
    expect(scanFactorOf({ statuses: ['cancelled'], complete: true }, none)).toBe(SCAN_FACTOR);
  });
});

describe('fractionsOf', () => {
  it("reads pg_stats' most common values and their shares", () => {
    const fractions = fractionsOf([
      { column: 'status', values: '{shipped,pending,cancelled}', shares: [0.6, 0.25, 0.15] },
      { column: 'complete', values: '{f,t}', shares: [0.52, 0.48] },
    ]);
    expect(fractions).toEqual(STORE);
  });

  it('reads a column without common values as nothing known', () => {
    expect(fractionsOf([{ column: 'status', values: null, shares: null }])).toEqual({
      status: new Map(),
      complete: new Map(),
    });
  });
});

describe('filterFractionsOf', () => {
  it('is undefined for a table never analysed', () => {
    expect(filterFractionsOf([])).toBeUndefined();
  });
});
