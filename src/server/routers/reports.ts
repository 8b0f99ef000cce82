import { createReportInput } from '../../shared/schemas/reports.js'
import { createReport } from '../domain/reports.js'
import { authedProcedure, router } from '../trpc.js'

export const reportsRouter = router({
  create: authedProcedure
    .meta({ rateLimit: 'report', errors: { 404: 'Nothing with that target_type and target_id (or nothing the caller may see)', 409: 'The caller already reported it, and that report is still open' } })
    .input(createReportInput)
    .mutation(({ ctx, input }) => createReport(ctx.services.db, ctx.user.id, input, ctx.services.clock())),
})
