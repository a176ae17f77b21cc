import { defineModule } from '../module.js';
import type { AccountsApi, AccountsNeeds } from './api.js';
import { sessionCredentials } from './credentials.js';
import { sessionRetentionSchedule } from './retention.js';
import { accountRoutes } from './routes.js';
import { AccountService } from './service.js';

/** Accounts (businesses), their users, sign-in sessions; a credential kind (user sessions). */
export const accountsModule = defineModule<AccountsNeeds>()({
  name: 'accounts',
  needs: ['apiKeys', 'principals'],
  create({ platform, needs }) {
    const jwtKey = platform.keys.jwtKey;
    const accounts = new AccountService(platform, needs);
    const api: AccountsApi = accounts;
    return {
      api,
      routes: (app) => accountRoutes(app, accounts),
      credentials: [sessionCredentials(accounts, jwtKey, platform.clock)],
      schedules: [sessionRetentionSchedule(platform.db, platform.clock, platform.config.retention.expiredMs)],
      // The API-keys module (built before this one) reads accounts through this point.
      contributes: { keyAccounts: [{ find: (id, trx) => accounts.keyAccount(id, trx) }] },
    };
  },
});
