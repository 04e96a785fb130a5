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
} as const;
