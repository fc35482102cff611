// Portal roles and what each may do (decision 0073): one table of rights per area of the portal,
// read by the portal's one gate hook (http/portal/gates.ts), its navigation, and the pages that
// show a form only to those who may send it.
import type { Feature } from '../plans/plans.js';

/** Stored in portal_users.role. `owner` and `viewer` are the roles from before 0073, unchanged. */
export const PORTAL_ROLES = ['owner', 'admin', 'developer', 'support', 'viewer'] as const;
export type PortalRole = (typeof PORTAL_ROLES)[number];

/** A role in words, as the Team page and the header show it. */
export const ROLE_LABELS: Record<PortalRole, string> = {
  owner: 'Owner',
  admin: 'Administrator',
  developer: 'Developer',
  support: 'Support agent',
  viewer: 'Viewer',
};

/** A role in prose ("your role is support agent"). */
export function roleName(role: PortalRole): string {
  return ROLE_LABELS[role].toLowerCase();
}

/** What a role is for, one line each (the Team page's legend). */
export const ROLE_SUMMARIES: Record<PortalRole, string> = {
  owner: 'everything, including making or removing owners',
  admin: 'everything but owners: manages the team (except owners), keys, webhooks, broadcasts, replies',
  developer: 'API keys, webhooks, templates, inbox rules; reads messages and conversations',
  support: 'reads messages, the inbox and conversations and replies; never sees keys or webhooks',
  viewer: 'reads (no keys revealed, no team, no audit log); changes nothing',
};

/**
 * A part of the portal as one right: a page group (its routes declare it, gates.ts) or a part of a
 * page. `own` is the user's own account (profile, password, two-factor, log out): everyone's.
 */
export const AREAS = [
  'overview',
  'messages',
  'keys',
  'accounts',
  'webhooks',
  'inbox',
  'inbox-rules',
  'suppressions',
  'broadcasts',
  'templates',
  'team',
  'audit',
  'own',
] as const;
export type Area = (typeof AREAS)[number];

const ALL: readonly PortalRole[] = PORTAL_ROLES;
const BUILDERS: readonly PortalRole[] = ['owner', 'admin', 'developer'];
const MANAGERS: readonly PortalRole[] = ['owner', 'admin'];

/**
 * Who may read (GET a page) and who may write (any other method) in each area, and the plan
 * feature the area needs. The table of decision 0073 and docs/portal.md, as code.
 */
export const RIGHTS: Record<Area, { read: readonly PortalRole[]; write: readonly PortalRole[]; feature?: Feature }> = {
  overview: { read: ALL, write: [] },
  messages: { read: ALL, write: ['owner', 'admin', 'developer', 'support'] },
  keys: { read: ['owner', 'admin', 'developer', 'viewer'], write: BUILDERS },
  accounts: { read: ALL, write: BUILDERS },
  webhooks: { read: ['owner', 'admin', 'developer', 'viewer'], write: BUILDERS, feature: 'webhooks' },
  inbox: { read: ALL, write: ['owner', 'admin', 'support'], feature: 'inbox' },
  'inbox-rules': { read: ALL, write: BUILDERS, feature: 'inbox' },
  // Opt-outs and blocked numbers: those who answer customers and those who integrate manage them.
  suppressions: { read: ALL, write: ['owner', 'admin', 'developer', 'support'] },
  broadcasts: { read: ALL, write: MANAGERS, feature: 'broadcasts' },
  templates: { read: ALL, write: BUILDERS },
  team: { read: MANAGERS, write: MANAGERS },
  audit: { read: MANAGERS, write: [] },
  own: { read: ALL, write: ALL },
};

export function mayRead(role: PortalRole, area: Area): boolean {
  return RIGHTS[area].read.includes(role);
}

export function mayWrite(role: PortalRole, area: Area): boolean {
  return RIGHTS[area].write.includes(role);
}

/** Roles only an owner gives or takes away: an administrator manages everyone else. */
export function mayManageRole(actor: PortalRole, role: PortalRole): boolean {
  if (actor === 'owner') return true;
  return actor === 'admin' && role !== 'owner';
}

/** The roles an actor may give on the Team page. */
export function assignableRoles(actor: PortalRole): PortalRole[] {
  return PORTAL_ROLES.filter((r) => mayManageRole(actor, r));
}
