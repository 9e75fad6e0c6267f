/**
 * Who gets the mouse wheel over a zoomable view (the graph, the timeline).
 *
 * As in map widgets, the wheel scrolls the page until the user clicks into the view, or
 * while Ctrl, Alt or Cmd is held; then it zooms the view, until a click outside it.  A
 * wheel that scrolls past shows, for a moment, a hint saying how to zoom.  The frame
 * carries `data-active` ("true" or "false") and the class `xlanb-zoom-active`.
 */
import { html } from './dom';

/** How long the "click to zoom" hint stays, in milliseconds. */
const HINT_MS = 1500;

/** The wheel policy of one frame. */
export class WheelGate {
  /**
   * Gate the wheel over `frame`.  `hint` is the hint's text and `className` its extra
   * class (the graph's tests find `.xlanb-graph-wheel-hint`).
   */
  constructor(frame: HTMLElement, hint: string, className = '') {
    this._frame = frame;
    this._hint = html('div', `xlanb-wheel-hint ${className}`.trim(), hint);
    this._hint.hidden = true;
    frame.appendChild(this._hint);
    this.setActive(false);
    const outside = (event: PointerEvent): void => {
      if (!frame.isConnected) {
        document.removeEventListener('pointerdown', outside, true);
      } else if (!frame.contains(event.target as Node)) {
        this.setActive(false);
      }
    };
    document.addEventListener('pointerdown', outside, true);
  }

  /** Whether the wheel zooms (the view was clicked into). */
  get active(): boolean {
    return this._active;
  }

  /** Give the wheel to the view (a click into it) or back to the page. */
  setActive(active: boolean): void {
    this._active = active;
    this._frame.classList.toggle('xlanb-zoom-active', active);
    this._frame.dataset.active = String(active);
    if (active) {
      this._hint.hidden = true;
    }
  }

  /**
   * Whether this wheel event zooms the view.  If it does, the page does not scroll
   * (the event's default is prevented); if not, the hint is shown and the page scrolls.
   */
  zooms(event: WheelEvent): boolean {
    if (!this._active && !(event.ctrlKey || event.metaKey || event.altKey)) {
      this._hint.hidden = false;
      window.clearTimeout(this._timer);
      this._timer = window.setTimeout(() => (this._hint.hidden = true), HINT_MS);
      return false;
    }
    event.preventDefault();
    return true;
  }

  private _frame: HTMLElement;
  private _hint: HTMLElement;
  private _active = false;
  private _timer = 0;
}
