// Under the filter box when a jump to a record set the person's filter aside:
// what it was, and a button to bring it back (a change of source brings it back too).
import { useUi } from '../store/ui-store';
import { restoreSuspendedFilter } from '../store/reveal-record';

export function SuspendedFilterNote() {
  const suspended = useUi((s) => s.suspendedFilter);
  if (suspended === null) return null;
  return (
    <div className="filter-suspended small" role="status" aria-label="Filter set aside">
      filter <code>{suspended}</code> set aside to show the record{' '}
      <button type="button" className="link" onClick={restoreSuspendedFilter}>
        Restore filter
      </button>
    </div>
  );
}
