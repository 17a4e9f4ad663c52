import { useEffect, useState } from 'react';
import { toString as qrSvg } from 'qrcode';
import { QR_SIZE } from './qr-size.ts';


/**
 * The text as a QR code image, drawn as SVG so it stays sharp; always dark on white, whatever the theme,
 * because scanners expect that contrast. Load it with React.lazy: the encoder is the heavy part of Receive.
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  const [svg, setSvg] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    qrSvg(text, { type: 'svg', margin: 2, errorCorrectionLevel: 'M', color: { dark: '#000000', light: '#ffffff' } }).then(
      (markup) => live && setSvg(markup),
      () => live && setSvg(null),
    );
    return () => {
      live = false;
    };
  }, [text]);
  return (
    <div className="rounded-2xl bg-white p-2 inline-flex" style={{ width: QR_SIZE + 16, height: QR_SIZE + 16 }}>
      {svg && <img src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`} width={QR_SIZE} height={QR_SIZE} alt={label} data-testid="qr-code" data-text={text} />}
    </div>
  );
}
