// The new-password field of every form that sets one (invitation, reset by email, Your account):
// one label and one input with the same rules the services check.
import { MIN_PASSWORD_LENGTH } from '../../portal/password.js';
import { type Html, html } from './html.js';

export function newPasswordField(id = 'password', name = 'password'): Html {
  return html`<label for="${id}">New password (at least ${MIN_PASSWORD_LENGTH} characters, not a common one)</label>
    <input
      id="${id}"
      name="${name}"
      type="password"
      autocomplete="new-password"
      minlength="${MIN_PASSWORD_LENGTH}"
      required
    />`;
}
