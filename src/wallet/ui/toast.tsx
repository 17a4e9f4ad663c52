import { useStore } from '@nanostores/react';
import { $activeToast, hideToast } from '../../stores/toasts.ts';

export function ToastHost() {
  const toast = useStore($activeToast);
  if (!toast) return null;
  return (
    <div
      role={toast.kind === 'error' ? 'alert' : 'status'}
      className={`toast ${toast.kind === 'error' ? 'toast-error' : 'toast-success'} ${toast.leaving ? 'toast-leaving' : ''}`}
      onClick={hideToast}
      data-testid="toast"
    >
      {toast.text}
    </div>
  );
}
