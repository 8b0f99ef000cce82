/** `GET /api/website`: a 302 to `PLAZA_WEBSITE_URL` (default `/docs`), validated at start-up. */
import { sendRedirect } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'

export async function handleWebsite({ res, ctx }: Exchange): Promise<void> {
  sendRedirect(res, ctx.services.config.websiteUrl)
}
