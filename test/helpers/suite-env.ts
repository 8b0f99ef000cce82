/**
 * The suite's own settings that every server it starts should see, in-process or spawned, even
 * those started with a clean environment: the password cost that test/run.ts lowers to save CPU
 * (scrypt at the production cost was about a third of the suite's CPU).
 */
export function passwordCostEnv(): NodeJS.ProcessEnv {
  return process.env.PLAZA_PASSWORD_COST ? { PLAZA_PASSWORD_COST: process.env.PLAZA_PASSWORD_COST } : {}
}

/**
 * Time budgets for a test that calls every operation once and expects each to succeed (the fuzz
 * and examples tests): a render's 10 s budget protects a server from one request, but three test
 * files at once on two loaded cores can take longer than that for a card that normally takes 50 ms.
 * These tests are about answers, not about the budgets, which tests of their own cover.
 */
export const generousRenderBudgets: Record<string, string> = { PLAZA_MAKER_TIMEOUT_MS: '120000', PLAZA_CODEIMAGE_TIMEOUT_MS: '120000' }
