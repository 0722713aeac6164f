/** @file Lets TypeScript accept the stylesheet imports in main.tsx; Vite bundles them as CSS files. */
declare module '*.css' {}
