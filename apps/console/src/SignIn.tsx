import { useRef, useState } from 'preact/hooks';
import { ApiError, login } from './api.js';
import type { SignedInUser } from './api.js';
import { describeError } from './errors.js';
import type { Translate } from './i18n.js';

/**
 * The sign-in form (issue 34): email and password, and the account's tenant name only once the API answered that
 * the email belongs to users of several accounts. An error is shown in words above the button and read out
 * (role=alert); what was typed stays.
 */
export function SignIn({ t, notice, onSignedIn }: { t: Translate; notice?: string | undefined; onSignedIn: (user: SignedInUser) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [tenantName, setTenantName] = useState('');
  const [askTenant, setAskTenant] = useState(false);
  const [error, setError] = useState<{ message: string; field: 'email' | 'password' | 'tenantName' | undefined } | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const tenantRef = useRef<HTMLInputElement>(null);
  const passwordRef = useRef<HTMLInputElement>(null);
  const emailRef = useRef<HTMLInputElement>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { user } = await login({ email: email.trim(), password, ...(askTenant && tenantName.trim() !== '' ? { tenantName: tenantName.trim() } : {}) });
      onSignedIn(user);
    } catch (caught) {
      if (caught instanceof ApiError && caught.field === 'tenantName' && !askTenant) {
        setAskTenant(true);
        setError({ message: t('tenantNameHint'), field: 'tenantName' });
        setTimeout(() => tenantRef.current?.focus(), 0);
      } else if (caught instanceof ApiError && caught.status === 401) {
        setError({ message: t('wrongPassword'), field: 'password' });
        passwordRef.current?.focus();
      } else if (caught instanceof ApiError && caught.status === 429) {
        setError({ message: t('tooManyAttempts'), field: undefined });
      } else {
        const field = caught instanceof ApiError && (caught.field === 'email' || caught.field === 'password' || caught.field === 'tenantName') ? caught.field : undefined;
        setError({ message: describeError(t, caught), field });
        if (field === 'email') emailRef.current?.focus();
      }
    } finally {
      setBusy(false);
    }
  };

  const invalid = (field: 'email' | 'password' | 'tenantName') => (error?.field === field ? { 'aria-invalid': true, 'aria-describedby': 'signin-error' } : {});
  return (
    <main class="signin">
      <form onSubmit={(event) => void submit(event)} noValidate aria-labelledby="signin-title">
        <h1 id="signin-title">{t('signInTitle')}</h1>
        {notice !== undefined ? <p role="status">{notice}</p> : null}
        <div class="field">
          <label for="signin-email">{t('email')}</label>
          <input id="signin-email" ref={emailRef} name="email" type="email" autocomplete="username" required value={email}
            onInput={(event) => setEmail(event.currentTarget.value)} {...invalid('email')} />
        </div>
        <div class="field">
          <label for="signin-password">{t('password')}</label>
          <input id="signin-password" ref={passwordRef} name="password" type="password" autocomplete="current-password" required value={password}
            onInput={(event) => setPassword(event.currentTarget.value)} {...invalid('password')} />
        </div>
        {askTenant ? (
          <div class="field">
            <label for="signin-tenant">{t('tenantName')}</label>
            <input id="signin-tenant" ref={tenantRef} name="tenantName" type="text" autocomplete="organization" required value={tenantName}
              onInput={(event) => setTenantName(event.currentTarget.value)} {...invalid('tenantName')} />
          </div>
        ) : null}
        {error !== undefined ? <p id="signin-error" class="form-error" role="alert">{error.message}</p> : null}
        <button type="submit" class="primary" disabled={busy}>{busy ? t('signingIn') : t('signIn')}</button>
      </form>
    </main>
  );
}
