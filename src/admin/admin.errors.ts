/** The admin API's codes, declared beside what every module's admin routes share. */
export { ADMIN_API, AdminErrors } from '../admin-routes/admin.errors';
