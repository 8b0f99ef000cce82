/**
 * The suite's own settings that every server it starts should see, in-process or spawned, even
 * those started with a clean environment: the password cost that test/run.ts lowers to save CPU
 * (scrypt at the production cost was about a third of the suite's CPU).
 */
export function passwordCostEnv(): NodeJS.ProcessEnv {
  return process.env.PLAZA_PASSWORD_COST ? { PLAZA_PASSWORD_COST: process.env.PLAZA_PASSWORD_COST } : {}
}
