import Database from 'libsql'
const r = new Database('/tmp/i45-sqimp-replica.db', { syncUrl: 'http://127.0.0.1:18610' })
const t0 = Date.now(); console.log(r.sync(), Date.now() - t0)
console.log(r.prepare('select count(*) as n from posts').get())
