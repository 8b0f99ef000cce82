/**
 * The suite's own settings that every server it starts should see, in-process or spawned, even
 * those started with a clean environment (a test's own env overrides them):
 * - the password cost that test/run.ts lowers to save CPU (scrypt at the production cost was about
 *   a third of the suite's CPU);
 * - generous render budgets: a render's 10-15 s budget protects a server from one request, but
 *   three test files at once on two loaded cores have taken longer than that for a card or a code
 *   image that normally takes 50 ms. The tests of the budgets set their own;
 * - no per-address connection cap to speak of: every test client comes from 127.0.0.1, as every
 *   client of a server behind a proxy comes from the proxy, and a test of many concurrent users
 *   opens more than the default 256 connections (test/server/edge.test.ts tests the cap);
 * - code-image workers started at the first render, not when `plaza serve` starts: a warm-up costs
 *   about a second of CPU a process, which the suite's 40-odd short-lived serve processes would
 *   pay mostly for nothing (test/server/config.test.ts tests the switch).
 */
export function suiteEnv(): NodeJS.ProcessEnv {
  return {
    ...(process.env.PLAZA_PASSWORD_COST ? { PLAZA_PASSWORD_COST: process.env.PLAZA_PASSWORD_COST } : {}),
    PLAZA_MAKER_TIMEOUT_MS: '120000',
    PLAZA_CODEIMAGE_TIMEOUT_MS: '120000',
    PLAZA_MAX_CONNECTIONS_PER_ADDRESS: '100000',
    PLAZA_CODEIMAGE_WARM: 'off',
  }
}

