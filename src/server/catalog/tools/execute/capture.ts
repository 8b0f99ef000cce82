/**
 * A program's stdout or stderr, kept up to a byte cap. Past the cap the rest is dropped, the text
 * ends with a note, and the sandbox stops the program: nobody reads 100 MB of output, and writing
 * it only burns the time budget.
 */
export class Capture {
  private readonly chunks: string[] = []
  private size = 0
  /** True once the cap was passed. */
  cut = false

  constructor(private readonly limit: number) {}

  /** Adds text; false once the cap is passed (the caller stops the program). */
  add(text: string): boolean {
    if (this.cut) return false
    const size = Buffer.byteLength(text, 'utf8')
    if (this.size + size <= this.limit) {
      this.chunks.push(text)
      this.size += size
      return true
    }
    // Keep what fits, cut at a character boundary.
    const room = this.limit - this.size
    this.chunks.push(Buffer.from(text, 'utf8').subarray(0, room).toString('utf8').replace(/\uFFFD$/, ''))
    this.size = this.limit
    this.cut = true
    return false
  }

  text(): string {
    const text = this.chunks.join('')
    return this.cut ? `${text}\n[output cut at ${this.limit} bytes]\n` : text
  }
}
