import { SPREAD_FROM, SPREAD_TO } from './page-orders';

/** A petId of the spread store, and one no order has. */
export const SOME_PET = '42';
export const NO_PET = '999999';

/** The ship-date ranges of the shapes: the store's two years, and one day. */
const WIDE = `shipDateFrom=${SPREAD_FROM}&shipDateTo=${SPREAD_TO}`;
const NARROW = 'shipDateFrom=2025-06-01T00:00:00Z&shipDateTo=2025-06-02T00:00:00Z';

/**
 * Every shape of v2's parameters, systematically: each subset of status (none, one,
 * several), petId (one with orders, one without), complete, and a ship-date range (wide, narrow),
 * times the four sorts; combinations that match many orders, a few, or none (a cancelled order is
 * never complete in the spread store). Query strings without limit or cursor.
 */
export const ORDER_SHAPES: string[] = (() => {
  const statuses = ['', 'status=cancelled', 'status=pending,cancelled'];
  const pets = ['', `petId=${SOME_PET}`, `petId=${NO_PET}`];
  const completes = ['', 'complete=true'];
  const ranges = ['', WIDE, NARROW];
  const sorts = ['sort=id', 'sort=-id', 'sort=shipDate', 'sort=-shipDate'];
  const shapes: string[] = [];
  for (const status of statuses) {
    for (const pet of pets) {
      for (const complete of completes) {
        for (const range of ranges) {
          for (const sort of sorts) {
            shapes.push([status, pet, complete, range, sort].filter(Boolean).join('&'));
          }
        }
      }
    }
  }
  return shapes;
})();
