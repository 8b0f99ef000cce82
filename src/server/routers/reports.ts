import { createReportInput } from '../../shared/schemas/reports.js'
import { createReport } from '../domain/reports.js'
import { authedProcedure, router } from '../trpc.js'

export const reportsRouter = router({
  create: authedProcedure
    .meta({ rateLimit: 'report' })
    .input(createReportInput)
    .mutation(({ ctx, input }) => createReport(ctx.services.db, ctx.user.id, input, ctx.services.clock())),
})
