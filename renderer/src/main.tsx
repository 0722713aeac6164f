/** @file Renderer entry: mounts the React app into #root. */
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'

const rootElement = document.getElementById('root')
if (rootElement === null) throw new Error('renderer/index.html has no #root element')

createRoot(rootElement).render(
  <StrictMode>
    <App />
  </StrictMode>
)
