/** What the profile feature offers the others: the API key list (the admin console shows a
 * user's keys with it). */
export { ApiKeyList } from './components/ApiKeyList';
