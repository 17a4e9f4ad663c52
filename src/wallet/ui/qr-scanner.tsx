import { useEffect, useRef } from 'react';
import type QrScanner from 'qr-scanner';
import { Glyph } from './glyph.tsx';

/** SPEC §9: scans per second are capped, so decoding never takes over a phone's CPU. */
export const MAX_SCANS_PER_SECOND = 5;

/** SPEC §9: the scan area is a centred square two-thirds of the video's smaller side. */
export function scanRegionOf(width: number, height: number): QrScanner.ScanRegion {
  const size = Math.round((2 / 3) * Math.min(width, height));
  return { x: Math.round((width - size) / 2), y: Math.round((height - size) / 2), width: size, height: size };
}

/**
 * The camera QR scanner (qr-scanner, loaded with this chunk only when the scanner opens). The rear camera is
 * preferred; qr-scanner asks for it at a minimum width of 1024, then 768, then any size (SPEC §9). A camera that is
 * missing or refused calls `onClose(true)`: the scanner closes and the form is back (SPEC §8).
 */
export function QrScannerView({ title, closeLabel, onResult, onClose }: { title: string; closeLabel: string; onResult: (text: string) => void; onClose: (unavailable?: boolean) => void }) {
  const video = useRef<HTMLVideoElement>(null);
  const handlers = useRef({ onResult, onClose });
  handlers.current = { onResult, onClose };

  useEffect(() => {
    let scanner: QrScanner | undefined;
    let stopped = false;
    let done = false;
    void (async () => {
      const element = video.current;
      if (!element) return;
      try {
        const { default: Scanner } = await import('qr-scanner');
        if (stopped) return;
        scanner = new Scanner(
          element,
          (result) => {
            if (done || !result.data) return;
            done = true;
            handlers.current.onResult(result.data);
          },
          {
            preferredCamera: 'environment',
            maxScansPerSecond: MAX_SCANS_PER_SECOND,
            calculateScanRegion: (v) => scanRegionOf(v.videoWidth, v.videoHeight),
            highlightScanRegion: true,
            returnDetailedScanResult: true,
          },
        );
        await scanner.start();
      } catch {
        if (!stopped) handlers.current.onClose(true);
      }
    })();
    return () => {
      stopped = true;
      scanner?.destroy();
    };
  }, []);

  return (
    <div className="fixed inset-0 z-40 bg-black flex flex-col items-center justify-center gap-4 p-4" role="dialog" aria-modal="true" aria-label={title} data-testid="qr-scanner">
      <p className="m-0 text-white font-600 text-center">{title}</p>
      <div className="relative w-full" style={{ maxWidth: 508 }}>
        <video ref={video} className="w-full rounded-2xl bg-black" muted playsInline data-testid="qr-video" />
      </div>
      <button type="button" className="btn bg-white text-black" onClick={() => handlers.current.onClose()} data-testid="qr-close">
        <Glyph name="close" size={18} />
        {closeLabel}
      </button>
    </div>
  );
}
