const D=require('better-sqlite3'); const db=new D(process.argv[2],{timeout:0}); 
try { db.pragma('locking_mode=EXCLUSIVE'); db.exec('BEGIN EXCLUSIVE'); db.exec('COMMIT'); console.log('got exclusive'); } catch(e){ console.log('busy', e.code); }
