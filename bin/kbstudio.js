#!/usr/bin/env node
// Runs the CLI from its TypeScript sources through tsx, so `npx kbstudio` works right after `npm install`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
