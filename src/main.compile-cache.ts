import { enableCompileCache } from 'node:module';

/**
 * Node keeps the compiled code of the modules it loads in a directory (NODE_COMPILE_CACHE, or
 * `node-compile-cache` in the temporary directory), and a later start of the same build reads it
 * instead of compiling them again: a restart, or another instance on the same host, starts on
 * less CPU. A directory it cannot write only leaves the start as it was.
 */
enableCompileCache();
