import { apiCall } from './client.ts';

/** SPEC §7 User service: the passcode (`pincode` header only when non-empty, see client.ts) and the e-mail change. */
export const validatePincode = (pincode: string) => apiCall<{ valid: boolean }>('/user/pinCode/validate', { method: 'POST', pincode });
export const enablePincode = (pinCode: string) => apiCall<{ pinCodeActive: boolean }>('/user/pinCode/enable', { method: 'POST', body: { pinCode } });
export const changePincode = (current: string, pinCode: string) =>
  apiCall<{ pinCodeActive: boolean }>('/user/pinCode/change', { method: 'POST', pincode: current, body: { pinCode } });
export const disablePincode = (current: string) => apiCall<{ pinCodeActive: boolean }>('/user/pinCode/disable', { method: 'POST', pincode: current });

export type EmailChangeStage = 'old' | 'new';
export const startEmailChange = (newEmail: string, pincode: string) =>
  apiCall<{ stage: EmailChangeStage }>('/user/email-change', { method: 'POST', pincode, body: { newEmail } });
export const confirmEmailChange = (confirmationCode: string) =>
  apiCall<{ stage: 'new' | 'done'; email?: string }>('/user/email-change/confirm', { method: 'POST', body: { confirmationCode } });
export const resendEmailChange = () => apiCall<{ stage: EmailChangeStage }>('/user/email-change/resend-confirmation', { method: 'POST', body: {} });

/** A blocked passcode (B2C_USM0032) is reset by a code mailed to the account's address; the reset turns it off. */
export const requestPincodeReset = () => apiCall<{ sent: boolean }>('/user/pinCode/reset', { method: 'POST', body: {} });
export const confirmPincodeReset = (confirmationCode: string) =>
  apiCall<{ pinCodeActive: boolean }>('/user/pinCode/reset/confirm', { method: 'POST', body: { confirmationCode } });
