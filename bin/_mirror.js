import module from 'node:module';
module.enableCompileCache?.();
await import('../dist/cli/main.js');
