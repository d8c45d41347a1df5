/** What the admin feature offers the others: picking one user (for admins, e.g. a report's scope). */
export { UserPicker, type PickedUser } from './components/UserPicker';
