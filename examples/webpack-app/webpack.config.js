import HtmlWebpackPlugin from 'html-webpack-plugin';

export default {
  mode: 'production',
  entry: './src/main.js',
  plugins: [new HtmlWebpackPlugin({ template: './index.html' })],
};
