/** Formats an instant as the API's date-time: UTC, `YYYY-MM-DD HH:MM:SS`. */
export function formatDateTime(value: Date | number): string {
  const date = typeof value === 'number' ? new Date(value) : value
  return date.toISOString().slice(0, 19).replace('T', ' ')
}

/** Parses the API's date-time (UTC) back into a Date. */
export function parseDateTime(value: string): Date {
  return new Date(value.replace(' ', 'T') + 'Z')
}
