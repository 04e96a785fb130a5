// The sign-in page and its two-factor step.
export const signIn = {
  'signIn.title': 'Sign in',
  'signIn.username': 'Username or e-mail',
  'signIn.password': 'Password',
  'signIn.submit': 'Sign in',
  'signIn.working': 'Signing in…',
  'signIn.twoFactorTitle': 'Two-factor code',
  'signIn.twoFactorHelp': 'Enter the six-digit code from your authenticator app.',
  'signIn.code': 'Code',
  'signIn.useRecovery': 'Use a recovery code instead',
  'signIn.useCode': 'Use an authenticator code instead',
  'signIn.recoveryCode': 'Recovery code',
  'signIn.verify': 'Verify',
  'signIn.back': 'Back to sign-in',
  'signIn.signedOut': 'You are signed out.',
  'signIn.or': 'or',

  'signIn.sso.title': 'Sign in with your company account',
  'signIn.sso.help':
    'If your organisation signs you in through its identity provider (Entra ID, Okta, Google Workspace, Keycloak…), enter your work e-mail.',
  'signIn.sso.email': 'Work e-mail',
  'signIn.sso.continue': 'Continue',
  'signIn.sso.looking': 'Looking up your organisation…',
  'signIn.sso.choose': 'Company sign-ins for this address',
  'signIn.sso.continueWith': 'Continue with {name}',
  'signIn.sso.none':
    'No company sign-in is set up for {email}. Sign in with your username and password instead, or ask your administrator.',
  'signIn.sso.redirecting': 'Taking you to your company’s sign-in page…',
  'signIn.sso.badLink':
    'This sign-in link does not work: its company sign-in does not exist or is turned off. Ask your administrator for a new link.',
  'signIn.sso.otherWays': 'Other ways to sign in',
  'signIn.sso.refused': 'The company sign-in did not sign you in.',
  'signIn.sso.error.transaction': 'The sign-in took too long, was already used, or was started in another tab. Please try again.',
  'signIn.sso.error.idp':
    'Your identity provider refused the sign-in, or its answer could not be verified. Try again, or ask your administrator.',
  'signIn.sso.error.unavailable': 'Your identity provider could not be reached. Try again in a moment.',
  'signIn.sso.error.not_linked':
    'Your company account is not linked to an account here, and none may be created for it. Ask your administrator to give you access.',
  'signIn.sso.error.account_disabled': 'Your account here is disabled. Ask your administrator.',
  'signIn.sso.error.too_many_attempts': 'Too many refused sign-ins from your network. Wait a few minutes, then try again.',
  'signIn.sso.error.unknown': 'Something went wrong during the company sign-in. Please try again.',
} as const;
