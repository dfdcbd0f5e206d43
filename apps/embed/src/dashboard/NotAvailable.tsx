/** What a viewer sees of data an access policy keeps from them: a lock and one calm sentence, no server text. */
export function NotAvailable({ message }: { message: string }) {
  return (
    <p className="widget-forbidden" data-testid="not-available">
      <svg className="lock" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
        <rect x="3" y="7" width="10" height="7" rx="1.5" fill="currentColor" />
        <path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" strokeWidth="1.5" />
      </svg>
      <span>{message}</span>
    </p>
  );
}
