import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RouteTable } from '../common/http/route-table';
import { undeclaredScopeProblem } from './scopes';

/**
 * Stops the start when a route requires a scope that no module declares, as a bad setting does:
 * a key could never be issued with it, so the route would answer 403 to every restricted key.
 * Registered with the guard chain, so every application that enforces scopes checks its routes.
 */
@Injectable()
export class ScopeDeclarationsCheck implements OnModuleInit {
  constructor(private readonly routes: RouteTable) {}

  onModuleInit(): void {
    const problem = undeclaredScopeProblem(this.routes.routes);
    if (problem) throw new Error(problem);
  }
}
