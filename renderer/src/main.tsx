/** @file Renderer entry: the stylesheets (plain CSS files, allowed by the page's CSP) and the React root. */
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'
import './styles/base.css'
import './styles/layout.css'
import './styles/chat.css'
import './styles/markdown.css'
import './styles/dialogs.css'
import './styles/devices.css'
import './styles/activity.css'
import './styles/documents.css'

const rootElement = document.getElementById('root')
if (rootElement === null) throw new Error('renderer/index.html has no #root element')

createRoot(rootElement).render(
  <StrictMode>
    <App />
  </StrictMode>
)
