import { expect } from 'chai';
import { cycleEnd, cycleOf, cycleStart, isCycle, nextCycle, parseCycle, previousCycle } from '../../domain/billing-cycle';

describe('billing cycles', () => {
  it('names the UTC calendar month an instant falls in', () => {
    expect(cycleOf(new Date('2026-11-30T23:59:59.999Z'))).to.equal('2026-11');
    expect(cycleOf(new Date('2026-12-01T00:00:00.000Z'))).to.equal('2026-12');
    // 23:30 on Nov 30 in New York is already December in UTC.
    expect(cycleOf(new Date('2026-11-30T23:30:00-05:00'))).to.equal('2026-12');
  });

  it('gives a cycle its start and its exclusive end (when its plan credits expire)', () => {
    expect(cycleStart('2026-02').toISOString()).to.equal('2026-02-01T00:00:00.000Z');
    expect(cycleEnd('2026-02').toISOString()).to.equal('2026-03-01T00:00:00.000Z');
    expect(cycleEnd('2026-12').toISOString()).to.equal('2027-01-01T00:00:00.000Z');
  });

  it('steps across year boundaries', () => {
    expect(previousCycle('2027-01')).to.equal('2026-12');
    expect(nextCycle('2026-12')).to.equal('2027-01');
    expect(previousCycle('2026-07')).to.equal('2026-06');
  });

  it('accepts only YYYY-MM', () => {
    for (const good of ['2026-01', '2026-12', '0999-05']) expect(isCycle(good), good).to.equal(true);
    for (const bad of ['2026-13', '2026-00', '2026-1', '26-01', '2026/01', '', 202601, null]) expect(isCycle(bad), String(bad)).to.equal(false);
    expect(() => parseCycle('2026-13')).to.throw(RangeError, /YYYY-MM/);
  });
});
