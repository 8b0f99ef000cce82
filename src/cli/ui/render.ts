/**
 * Renders a view with ink for a terminal. Imported lazily (only on a TTY), so plain and --json runs
 * never load React or ink.
 *
 * NO_COLOR: ink colours through chalk, whose colour detection reads FORCE_COLOR but not NO_COLOR
 * (checked in chalk 5.6's vendored supports-color). So NO_COLOR (any non-empty value, no-color.org)
 * is turned into FORCE_COLOR=0 before ink, and with it chalk, is first imported.
 */
import { createElement } from 'react'
import type { View } from './format.js'

if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0'

const [{ renderToString }, { ViewElement }] = await Promise.all([import('ink'), import('./views.js')])

/** The view as the terminal shows it (ANSI colours unless NO_COLOR), `columns` wide. */
export function renderView(view: View, columns = 80, now: Date = new Date()): string {
  return renderToString(createElement(ViewElement, { view, now }), { columns })
}
