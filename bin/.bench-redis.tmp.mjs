import { register } from 'tsx/esm/api';
register();
const mod = await import('/work/main/bench/redis.ts');
for await (const line of mod.run()) console.log(JSON.stringify(line));
