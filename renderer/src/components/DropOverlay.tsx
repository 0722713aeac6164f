/** @file Shown while files are dragged over the window: where they go. */
import type { JSX } from 'react'
import { Icon } from './icons'

/** Full-window overlay; decorative (the drop itself is the action), so hidden from assistive technology. */
export function DropOverlay(): JSX.Element {
  return (
    <div className="drop-overlay" aria-hidden="true">
      <div className="drop-overlay-box">
        <Icon name="file" size={32} />
        <p>Drop a file to summarize it</p>
      </div>
    </div>
  )
}
